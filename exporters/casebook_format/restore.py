"""A checked Casebook document back into the database, exactly as it was exported.

The interchange part (characters, clues, relationships, chains, questions, options) goes through
the one builder (:func:`annotate.builder.build_game`), so identity matching and ``--replace`` work
as for every format. What the interchange model does not carry is then set on the built rows in
the same transaction: review states and people, every evidence span (with label, state and who
made it) and its links, the import report, sessions and synthesis provenance, and one audit entry
holding the document's audit summary (see :mod:`.audit`).

People are matched by username; a name with no account on this server is kept as recorded in that
audit entry and exported again under the same name.
"""
from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import transaction

from annotate import models as m
from annotate.builder import BuildResult, build_game, find_existing
from casebook import interchange as ix

from .audit import record_import


def to_interchange(data: dict[str, Any], images: dict[str, bytes], *, evidence: bool = False) -> ix.Game:
    """The document as an interchange game; spans are restored separately (``_spans``).

    ``evidence`` hands the builder each item's spans too, so a replace matches the stored spans and keeps
    their ids instead of dropping the links of items whose evidence it was not told about.
    """
    g = data["game"]
    by_id = {s["id"]: s for s in data["spans"]}

    def spans(item: dict[str, Any]) -> list[ix.Span]:
        return [ix.Span(**{f: by_id[sid][f] for f in ("document", "owner", "start", "end", "quote", "label")})
                for sid in item["evidence"]] if evidence else []

    game = ix.Game(
        slug=g["slug"], title=g["title"], language=g["language"], origin=g["origin"], title_note=g["title_note"],
        victims=list(g["victims"]), public_clue_text=g["public_clue_text"], counterpart=g["counterpart"],
        truth=ix.TruthManual(**g["truth"]), task_prompts=dict(g["task_prompts"]),
        extra=ix.unpack_key_order(g["extra"]), report=[ix.Problem(**p) for p in g["import_report"]],
    )
    game.characters = [ix.Character(**{**c, "extra": ix.unpack_key_order(c["extra"])}) for c in data["characters"]]
    game.kills = [ix.Kill(**k) for k in data["kills"]]
    game.clues = [
        ix.Clue(key=c["key"], kind=c["kind"], title=c["title"], text=c["text"], owner=c["owner"],
                filename=c["filename"], data=images.get(c["image"]) if c["image"] else None,
                media_type=c["media_type"], image_kind=c["image_kind"], ocr_text=c["ocr_text"],
                extra=ix.unpack_key_order(c["extra"]))
        for c in data["clues"]
    ]
    game.relationships = [
        ix.Relationship(source=r["source"], target=r["target"], labels=list(r["labels"]), note=r["note"],
                        status=r["review"]["status"], evidence=spans(r))
        for r in data["relationships"]
    ]
    game.chains = [
        ix.ReasoningChain(goal=c["goal"], title=c["title"], status=c["review"]["status"], nodes=[
            ix.ChainNode(key=n["key"], kind=n["kind"], text=n["text"], parents=list(n["parents"]), level=n["level"],
                         image_clue=n["image_clue"], knowledge=n["knowledge"], extra=ix.unpack_key_order(n["extra"]),
                         evidence=spans(n))
            for n in c["nodes"]
        ])
        for c in data["chains"]
    ]
    game.key_statements = [ix.KeyStatement(**k) for k in data["key_statements"]]
    game.questions = [
        ix.Question(
            kind=q["kind"], stem=q["stem"], answer=q["answer"], sub_type=q["sub_type"], multi=q["multi"],
            weight=q["weight"], perspective=q["perspective"], image_clue=q["image_clue"], chain_node=q["chain_node"],
            level=q["level"], source=q["source"], raw=q["raw"], status=q["review"]["status"],
            provenance=dict(q["provenance"]), extra=ix.unpack_key_order(q["extra"]), evidence=spans(q),
            options=[ix.Option(text=o["text"], correct=o["correct"], origin=o["origin"], model=o["model"],
                               review=o["review"]) for o in q["options"]],
        )
        for q in data["questions"]
    ]
    return game


class _People:
    """Usernames → this server's users (None when there is no such account)."""

    def __init__(self) -> None:
        self.cache: dict[str, Any] = {"": None}

    def __call__(self, name: str) -> Any:
        if name not in self.cache:
            self.cache[name] = get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: name}).first()
        return self.cache[name]


def restore_document(data: dict[str, Any], images: dict[str, bytes], *, replace: bool = False,
                     user: Any = None) -> BuildResult:
    """Build the game, then put back what the builder does not know, all in one transaction."""
    people = _People()
    game = to_interchange(data, images)
    existing = find_existing(game)
    if existing is not None and not replace:
        return _compare(existing, data, images)
    if existing is not None:
        game = to_interchange(data, images, evidence=True)
    with transaction.atomic():
        built = build_game(game, replace=replace, user=user)
        if not built.written:
            return built
        row = built.game
        row.targets = data["game"]["targets"]
        row.import_report = data["game"]["import_report"]
        row.save(update_fields=["targets", "import_report"])
        _review(m.Relationship.objects.filter(game=row).order_by("position", "id"), data["relationships"], people)
        _review(m.ReasoningChain.objects.filter(game=row).order_by("position", "id"), data["chains"], people)
        _review(m.Question.objects.filter(game=row).order_by("position", "id"), data["questions"], people)
        _spans(row, data, people)
        _sessions(row, data.get("sessions", []), people, replace)
        _synthesis(row, data.get("synthesis", []), people, replace)
        unplaced = _workflow(row, data["workflow"], people)
        record_import(row, data, user, unplaced)
    return built


def _compare(existing: m.Game, data: dict[str, Any], images: dict[str, bytes]) -> BuildResult:
    """An existing game is "unchanged" when it exports to this very document, else it is kept ("exists")."""
    from .document import build_document

    current = build_document(existing)
    if current.data == data and current.images == images:
        return BuildResult(existing, "unchanged")
    return BuildResult(existing, "exists", [ix.Problem(
        file=data["game"]["slug"], message=f"game '{existing.slug}' already exists with different content",
        action="kept the stored game; re-run with --replace to overwrite it", severity="error")])


def _review(rows, items: list[dict[str, Any]], people: _People) -> None:
    rows = list(rows)
    for row, item in zip(rows, items, strict=True):
        review = item["review"]
        row.author, row.reviewer = people(review["author"]), people(review["reviewer"])
        row.reject_reason = review["reject_reason"]
    if rows:
        type(rows[0]).objects.bulk_update(rows, ["author", "reviewer", "reject_reason"], batch_size=500)


def _spans(row: m.Game, data: dict[str, Any], people: _People) -> None:
    """Every span of the document (cited or not) and its links; the game's other spans go."""
    characters = {c.name: c for c in row.characters.all()}
    clues = {c.key: c for c in row.clues.all()}
    existing: dict[tuple, list[m.EvidenceSpan]] = {}
    for span in row.spans.all():
        existing.setdefault((span.document, span.character_id, span.clue_id, span.start, span.end, span.quote,
                             span.label), []).append(span)
    by_id: dict[str, m.EvidenceSpan] = {}
    creates, updates = [], []
    for s in data["spans"]:
        character = characters.get(s["owner"]) if s["document"] in (ix.SpanDocument.SCRIPT, ix.SpanDocument.GOALS) else None
        clue = clues.get(s["owner"]) if s["document"] == ix.SpanDocument.CLUE else None
        key = (s["document"], character.pk if character else None, clue.pk if clue else None, s["start"], s["end"],
               s["quote"], s["label"])
        pool = existing.get(key, [])
        span = pool.pop(0) if pool else m.EvidenceSpan(
            game=row, document=s["document"], character=character, clue=clue, start=s["start"], end=s["end"],
            quote=s["quote"], label=s["label"])
        span.state, span.created_by = s["state"], people(s["created_by"])
        (updates if span.pk else creates).append(span)
        by_id[s["id"]] = span
    m.EvidenceSpan.objects.filter(pk__in=[s.pk for pool in existing.values() for s in pool]).delete()
    m.EvidenceSpan.objects.bulk_create(creates, batch_size=2000)
    m.EvidenceSpan.objects.bulk_update(updates, ["state", "created_by"], batch_size=500)

    def link(through, field_name: str, owners: list, items: list[dict[str, Any]]) -> None:
        through.objects.filter(**{f"{field_name}__in": owners}).delete()
        through.objects.bulk_create([through(**{field_name: owner, "evidencespan": by_id[sid]})
                                     for owner, item in zip(owners, items, strict=True) for sid in item["evidence"]],
                                    batch_size=2000)

    link(m.Relationship.evidence.through, "relationship",
         list(m.Relationship.objects.filter(game=row).order_by("position", "id")), data["relationships"])
    link(m.Question.evidence.through, "question",
         list(m.Question.objects.filter(game=row).order_by("position", "id")), data["questions"])
    nodes = []
    for chain, item in zip(m.ReasoningChain.objects.filter(game=row).order_by("position", "id"), data["chains"],
                           strict=True):
        nodes += list(zip(chain.nodes.order_by("position", "id"), item["nodes"], strict=True))
    link(m.ChainNode.evidence.through, "chainnode", [n for n, _ in nodes], [i for _, i in nodes])


def _workflow(row: m.Game, workflow: dict[str, list], people: _People) -> dict[str, list]:
    """Comments, validation answers and relationship labels; returns those whose person has no account here."""
    unplaced: dict[str, list] = {}
    if not _app_needed("review", any(workflow.values()), "review comments or validations"):
        return unplaced
    Comment, ValidationAnswer, LabelJudgement = (apps.get_model("review", name)
                                                 for name in ("Comment", "ValidationAnswer", "LabelJudgement"))
    items = {f"q{i}": ("question", q) for i, q in enumerate(
        m.Question.objects.filter(game=row).order_by("position", "id").values_list("pk", flat=True), 1)}
    items.update({f"r{i}": ("relationship", r) for i, r in enumerate(
        m.Relationship.objects.filter(game=row).order_by("position", "id").values_list("pk", flat=True), 1)})
    items.update({f"ch{i}": ("reasoningchain", c) for i, c in enumerate(
        m.ReasoningChain.objects.filter(game=row).order_by("position", "id").values_list("pk", flat=True), 1)})
    question_ids = {sid: pk for sid, (_, pk) in items.items() if sid.startswith("q")}
    comments = [Comment(game=row, item_type=items[c["item"]][0], item_id=items[c["item"]][1],
                        author=people(c["author"]), text=c["text"], system=c["system"])
                for c in workflow["comments"]]
    _sync(Comment.objects.filter(game=row).order_by("created_at", "id"), comments,
          ("item_type", "item_id", "author_id", "text", "system"), ())
    answers = []
    for v in workflow["validations"]:
        if people(v["validator"]) is None:
            unplaced.setdefault("validations", []).append(v)
            continue
        answers.append(ValidationAnswer(question_id=question_ids[v["question"]], validator=people(v["validator"]),
                                        letters=v["letters"], key=v["key"], agrees=v["agrees"],
                                        question_version=v["question_version"]))
    _sync(ValidationAnswer.objects.filter(question__game=row).order_by("created_at", "id"), answers,
          ("question_id", "validator_id", "question_version"), ("letters", "key", "agrees"))
    characters = {c.name: c for c in row.characters.all()}
    labels = []
    for j in workflow["label_judgements"]:
        if people(j["annotator"]) is None:
            unplaced.setdefault("label_judgements", []).append(j)
            continue
        labels.append(LabelJudgement(game=row, annotator=people(j["annotator"]), source=characters[j["source"]],
                                     target=characters[j["target"]], labels=j["labels"]))
    _sync(LabelJudgement.objects.filter(game=row).order_by("id"), labels,
          ("annotator_id", "source_id", "target_id"), ("labels",))
    return unplaced


def _sync(stored, wanted: list, key: tuple[str, ...], fields: tuple[str, ...]) -> None:
    """Make the stored rows equal to ``wanted`` keeping ids: match by natural key, update, create, delete the rest.

    A replace must keep identities (links, audit entries and other tools point at these ids), so a row the
    document still has stays the same row; rows with equal keys are matched in their stored order.
    """
    pools: dict[tuple, list] = {}
    for obj in stored:
        pools.setdefault(tuple(getattr(obj, f) for f in key), []).append(obj)
    creates, updates = [], []
    for obj in wanted:
        pool = pools.get(tuple(getattr(obj, f) for f in key), [])
        if not pool:
            creates.append(obj)
            continue
        kept = pool.pop(0)
        for f in fields:
            setattr(kept, f, getattr(obj, f))
        updates.append(kept)
    model = stored.model
    model.objects.filter(pk__in=[obj.pk for pool in pools.values() for obj in pool]).delete()
    if fields and updates:
        model.objects.bulk_update(updates, list(fields), batch_size=500)
    model.objects.bulk_create(creates, batch_size=2000)


def _app_needed(app: str, data: Any, what: str) -> bool:
    """Whether ``app`` is there to restore ``data``; data for a missing app is an error, none is fine."""
    if apps.is_installed(app):
        return True
    if data:
        raise ValueError(f"the document holds {what} but the {app} app is not installed")
    return False


def _sessions(row: m.Game, sessions: list[dict[str, Any]], people: _People, replace: bool) -> None:
    if not _app_needed("playlogs", sessions, "played sessions") or (not sessions and not replace):
        return
    Session, Player, Turn, TurnAnnotation = (apps.get_model("playlogs", name)
                                             for name in ("Session", "Player", "Turn", "TurnAnnotation"))
    Session.objects.filter(game=row).delete()  # a replace makes the sessions equal to the document's
    characters = {c.name: c for c in row.characters.all()}
    for s in sessions:
        session = Session.objects.create(game=row, title=s["title"], session_type=s["session_type"],
                                         source_format=s["source_format"], source_name=s["source_name"],
                                         extra=s["extra"])
        players = Player.objects.bulk_create([
            Player(session=session, name=p["name"], character=characters.get(p["character"]),
                   true_role=p["true_role"], position=i)
            for i, p in enumerate(s["players"])
        ])
        by_name = {p.name: p for p in players}
        turns = Turn.objects.bulk_create([
            Turn(session=session, index=t["index"], speaker=by_name.get(t["speaker"]), speaker_label=t["speaker_label"],
                 text=t["text"], phase=t["phase"], visible_to=t["visible_to"], timestamp=t["timestamp"],
                 extra=t["extra"])
            for t in s["turns"]
        ], batch_size=2000)
        TurnAnnotation.objects.bulk_create([
            TurnAnnotation(game=row, turn=turn, annotator=people(a["annotator"]), source=a["source"],
                           triplets=a["triplets"], face=a["face"], tone=a["tone"], suspicions=a["suspicions"],
                           extra=a["extra"], status=a["review"]["status"], author=people(a["review"]["author"]),
                           reviewer=people(a["review"]["reviewer"]), reject_reason=a["review"]["reject_reason"])
            for turn, t in zip(turns, s["turns"], strict=True)
            for a in t["annotations"]
        ], batch_size=2000)


def _synthesis(row: m.Game, runs: list[dict[str, Any]], people: _People, replace: bool) -> None:
    if not _app_needed("synthesis", runs, "synthesis provenance") or (not runs and not replace):
        return
    from .document import RECORD_FIELDS, RUN_FIELDS

    SynthesisRun, StageRecord = apps.get_model("synthesis", "SynthesisRun"), apps.get_model("synthesis", "StageRecord")
    SynthesisRun.objects.filter(game=row).delete()
    for r in runs:
        run = SynthesisRun.objects.create(game=row, user=people(r["user"]), **{f: r[f] for f in RUN_FIELDS})
        StageRecord.objects.bulk_create([StageRecord(run=run, **{f: rec[f] for f in RECORD_FIELDS})
                                         for rec in r["records"]])
