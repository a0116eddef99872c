"""The one builder: writes an interchange ``Game`` into the database.

Everything goes in one transaction with bulk inserts, so an import either lands whole or not at
all, and its cost does not grow with one query per row. Re-importing the same content is a
no-op ("unchanged"); different content for an existing game is refused ("exists") unless
``replace`` is given, which makes the stored game equal to the source: rows are matched by a
stable key and updated in place (ids, authors, audit, comments, validation answers and drafts
survive; memberships, jobs and the link to the other language too), evidence spans follow their
quote into changed text, and spans whose quote is gone are listed in the report.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Q
from django.utils.text import slugify

from casebook import interchange as ix

from . import models as m

_CHILD_RELATIONS = (
    "questions", "key_statements", "chains", "relationships", "spans", "clues", "kills", "characters",
)


@dataclass
class BuildResult:
    game: m.Game
    status: str  # "created" | "replaced" | "unchanged" | "exists"
    problems: list[ix.Problem] = field(default_factory=list)

    @property
    def written(self) -> bool:
        return self.status in {"created", "replaced"}


def db_slug(source_slug: str, language: str) -> str:
    """A URL-safe slug for a published id such as "Sin (4 people closed)" or "罪恶（4人封闭）"."""
    base = slugify(source_slug, allow_unicode=True) or "game"
    return base[:190]


def find_existing(game: ix.Game) -> m.Game | None:
    """The stored game ``game`` would overwrite: same origin only, so an ingest titled like an
    imported game (or the other way round) never matches it silently; it gets its own slug."""
    same_origin = m.Game.objects.filter(origin=game.origin, language=game.language)
    return (
        same_origin.filter(source_id=game.slug).first()
        or same_origin.filter(slug=db_slug(game.slug, game.language)).first()
    )


def _unique_slug(wanted: str, exclude_pk: int | None) -> str:
    slug, n = wanted, 2
    while m.Game.objects.filter(slug=slug).exclude(pk=exclude_pk).exists():
        slug = f"{wanted}-{n}"
        n += 1
    return slug


def build_game(game: ix.Game, *, replace: bool = False, user: Any = None) -> BuildResult:
    """Write ``game`` to the database; see the module docstring for the idempotency rules.

    ``replace`` makes the stored game equal to ``game`` whatever its stored hash says (it may have
    been edited since it was imported); rows are matched by a stable key and updated in place.
    """
    digest = game.content_hash()
    existing = find_existing(game)
    if existing is not None and not replace:
        if existing.content_hash == digest:
            return BuildResult(existing, "unchanged")
        problem = ix.Problem(
            file=game.slug,
            message=f"game '{existing.slug}' already exists with different content",
            action="kept the stored game; re-run with --replace to overwrite it",
            severity="error",
        )
        return BuildResult(existing, "exists", [problem])

    with transaction.atomic():
        if existing is not None:
            row = m.Game.objects.select_for_update().get(pk=existing.pk)
            status = "replaced"
        else:
            row = m.Game(slug=_unique_slug(db_slug(game.slug, game.language), None))
            status = "created"
        problems = list(game.report)
        _fill_game_row(row, game, digest)
        row.save()
        writer = _Writer(row, game, problems, user)
        writer.write()
        if writer.overwritten:
            counts = ", ".join(f"{n} {kind}" for kind, n in sorted(writer.overwritten.items()))
            problems.append(ix.Problem(
                file=game.slug, message=f"replacing overwrote items edited in Casebook: {counts}",
                action="the source's version was kept; the edits are in the audit log", severity="warning",
            ))
        row.import_report = [asdict(p) for p in problems]
        row.save(update_fields=["import_report"])
        _link_counterpart(row, game)
    return BuildResult(row, status, problems)


def _fill_game_row(row: m.Game, game: ix.Game, digest: str) -> None:
    row.title = game.title
    row.title_note = game.title_note
    row.language = game.language
    row.origin = game.origin
    row.source_id = game.slug
    row.truth_text = game.truth.text
    row.truth_motive = game.truth.motive
    row.truth_method = game.truth.method
    row.public_clue_text = game.public_clue_text
    row.task_prompt_civilian = game.task_prompts.get("civilian", "")
    row.task_prompt_murderer = game.task_prompts.get("murderer", "")
    # Victims live only in the characters' flags (is_victim, victim_position), so edits reach exports.
    row.extra = ix.pack_key_order({k: v for k, v in game.extra.items() if k != "victims"})
    extra_prompts = {k: v for k, v in game.task_prompts.items() if k not in {"civilian", "murderer"}}
    if extra_prompts:
        row.extra["task_prompts"] = extra_prompts
    row.content_hash = digest


def _link_counterpart(row: m.Game, game: ix.Game) -> None:
    if not game.counterpart:
        return
    other = (
        m.Game.objects.filter(source_id=game.counterpart).exclude(language=row.language).exclude(pk=row.pk).first()
        or m.Game.objects.filter(slug=db_slug(game.counterpart, "")).exclude(pk=row.pk).first()
    )
    if other is None:
        return  # linked when the other language is built
    m.Game.objects.filter(counterpart=other).exclude(pk=row.pk).update(counterpart=None)
    m.Game.objects.filter(counterpart=row).exclude(pk=other.pk).update(counterpart=None)
    row.counterpart = other
    row.save(update_fields=["counterpart"])
    other.counterpart = row
    other.save(update_fields=["counterpart"])


# Provenance keys the loader adds from the stored row (author, reviewer, approval); not content.
LOADER_PROVENANCE = frozenset({"author", "approved_by", "approved_at", "reviewed_by"})


def _value(row: Any, name: str) -> Any:
    return getattr(row, row._meta.get_field(name).attname)


def _text_of(game: m.Game, span: m.EvidenceSpan, characters: dict[int, m.Character], clues: dict[int, m.Clue]) -> str:
    """The stored text a span points into (as ``annotate.services.spans.Target.text``)."""
    if span.document == ix.SpanDocument.SCRIPT:
        return characters[span.character_id].script if span.character_id in characters else ""
    if span.document == ix.SpanDocument.GOALS:
        return "\n".join(characters[span.character_id].goals or []) if span.character_id in characters else ""
    if span.document == ix.SpanDocument.CLUE:
        clue = clues.get(span.clue_id)
        return (clue.text or clue.ocr_text) if clue is not None else ""
    if span.document == ix.SpanDocument.MANUAL:
        return game.truth_text
    return game.public_clue_text


def place_quote(text: str, quote: str, start: int) -> int | None:
    """Where ``quote`` now is in ``text``: the occurrence nearest the old ``start``, or None."""
    if not quote:
        return None
    found, at = [], text.find(quote)
    while at != -1:
        found.append(at)
        at = text.find(quote, at + 1)
    return min(found, key=lambda pos: (abs(pos - start), pos)) if found else None


class _Writer:
    """Writes the children of one game in bulk; names resolve through ``interchange.name_key``.

    Rows already stored are matched by a stable key (character name, clue key, relationship ends,
    chain position and node key, question kind and ordinal, option position, span quote) and
    updated in place, so ids, authors, review states and everything pointing at them (audit,
    comments, validation answers, drafts) survive a replace or a rebuild. Unmatched rows are
    deleted at the end. ``overwritten`` counts rows edited in Casebook (version > 1) that changed.
    """

    def __init__(self, row: m.Game, game: ix.Game, problems: list[ix.Problem], user: Any) -> None:
        self.row, self.game, self.problems, self.user = row, game, problems, user
        self.characters: dict[str, m.Character] = {}
        self.clues: dict[str, m.Clue] = {}
        self.nodes: dict[tuple[int, str], m.ChainNode] = {}
        self.nodes_by_key: dict[str, m.ChainNode] = {}  # first chain wins when keys repeat across chains
        self.old_characters = {ix.name_key(c.name): c for c in row.characters.all()} if row.pk else {}
        self.overwritten: dict[str, int] = {}
        self.leftovers: list[list[Any]] = []

    def write(self) -> None:
        self._characters()
        self._kills()
        self._clues()
        self._relationships()
        self._chains()
        self._key_statements()
        self._questions()
        self._delete_leftovers()
        self._reanchor_spans()

    # -- helpers --------------------------------------------------------------------------
    def _problem(self, message: str, action: str, location: str = "") -> None:
        self.problems.append(ix.Problem(file=self.game.slug, message=message, action=action, location=location))

    def _sync(self, old: dict[Any, Any], wanted: list[tuple[Any, Any]], fields: list[str], what: str) -> list[Any]:
        """Stored rows for ``wanted`` (key, fresh row): matches keep their pk and the fields not listed.

        Changed reviewed items get a new ``version`` so open editors notice; unmatched stored rows
        are deleted at the end (after every stage has re-pointed its links).
        """
        rows, creates, updates = [], [], []
        for key, fresh in wanted:
            current = old.pop(key, None)
            if current is None:
                creates.append(fresh)
                rows.append(fresh)
                continue
            if any(_value(current, f) != _value(fresh, f) for f in fields):
                if getattr(current, "version", 1) > 1:
                    self.overwritten[what] = self.overwritten.get(what, 0) + 1
                for f in fields:
                    setattr(current, current._meta.get_field(f).attname, _value(fresh, f))
                if hasattr(current, "version"):
                    current.version += 1
                updates.append(current)
            rows.append(current)
        model = type(wanted[0][1]) if wanted else None
        if creates:
            model.objects.bulk_create(creates, batch_size=2000)
        if updates:
            model.objects.bulk_update(updates, fields + (["version"] if hasattr(updates[0], "version") else []),
                                      batch_size=500)
        edited_gone = sum(1 for r in old.values() if getattr(r, "version", 1) > 1)
        if edited_gone:
            self.overwritten[what] = self.overwritten.get(what, 0) + edited_gone
        self.leftovers.append(list(old.values()))
        return rows

    def character(self, name: str, *, create: bool, why: str = "") -> m.Character | None:
        """The character called ``name`` (or with that alias); optionally created as a non-player."""
        if not name:
            return None
        key = ix.name_key(name)
        found = self.characters.get(key)
        if found is not None or not create:
            return found
        row = self.old_characters.pop(key, None)
        if row is None:
            row = m.Character.objects.create(game=self.row, name=name, playable=False, position=len(self.characters))
        else:
            row.playable, row.position = False, len(self.characters)
            row.save(update_fields=["playable", "position"])
        self.characters[key] = row
        self._problem(f"'{name}' is not a character of the game", f"added as a non-player ({why})")
        return row

    def spans(self, spans: list[ix.Span]) -> list[m.EvidenceSpan]:
        rows = []
        for span in spans:
            character = clue = None
            if span.document in (ix.SpanDocument.SCRIPT, ix.SpanDocument.GOALS):
                character = self.character(span.owner, create=False)
            elif span.document == ix.SpanDocument.CLUE:
                clue = self.clues.get(span.owner)
            rows.append(
                m.EvidenceSpan(
                    game=self.row, document=span.document, character=character, clue=clue,
                    start=span.start, end=span.end, quote=span.quote, label=span.label, created_by=self.user,
                )
            )
        return rows

    def _attach_spans(self, through: Any, field_name: str, owners_and_spans: list[tuple[Any, list[ix.Span]]]) -> None:
        """Each owner's spans: stored ones matched by quote (keeping their id), new ones created, in bulk."""
        owner_column = f"{field_name}_id"
        old: dict[int, list[m.EvidenceSpan]] = {}
        for link in through.objects.filter(**{f"{owner_column}__in": [o.pk for o, _ in owners_and_spans]}).select_related("evidencespan"):
            old.setdefault(getattr(link, owner_column), []).append(link.evidencespan)
        creates: list[tuple[Any, m.EvidenceSpan]] = []
        moved: list[m.EvidenceSpan] = []
        dropped: list[int] = []
        for owner, spans in owners_and_spans:
            pool = old.pop(owner.pk, [])
            for fresh in self.spans(spans):
                match = next((s for s in pool if (s.document, s.character_id, s.clue_id, s.quote, s.label)
                              == (fresh.document, fresh.character_id, fresh.clue_id, fresh.quote, fresh.label)), None)
                if match is None:
                    creates.append((owner, fresh))
                    continue
                pool.remove(match)
                if (match.start, match.end) != (fresh.start, fresh.end):
                    match.start, match.end = fresh.start, fresh.end
                    moved.append(match)
            dropped += [s.pk for s in pool]
        m.EvidenceSpan.objects.bulk_create([span for _, span in creates], batch_size=2000)
        m.EvidenceSpan.objects.bulk_update(moved, ["start", "end"], batch_size=500)
        through.objects.filter(evidencespan_id__in=dropped).delete()
        through.objects.bulk_create([through(**{field_name: o, "evidencespan": s}) for o, s in creates], batch_size=2000)
        _delete_unlinked_spans(dropped)

    # -- stages ---------------------------------------------------------------------------
    def _characters(self) -> None:
        victims = {ix.name_key(v): i for i, v in enumerate(self.game.victims)}
        wanted = []
        for position, ch in enumerate(self.game.characters):
            key = ix.name_key(ch.name)
            if key in self.characters:
                self._problem(f"character '{ch.name}' appears twice", "kept the first", f"characters[{position}]")
                continue
            row = m.Character(
                game=self.row, name=ch.name, aliases=list(ch.aliases), playable=ch.playable, position=position,
                script=ch.script, goals=list(ch.goals), self_intro=ch.self_intro, fixed_answer=ch.fixed_answer,
                is_murderer=ch.is_murderer, is_victim=ch.is_victim or key in victims,
                victim_position=victims.get(key), key_role=ch.key_role, extra=ix.pack_key_order(ch.extra),
            )
            self.characters[key] = row
            wanted.append((key, row))
        fields = ["name", "aliases", "playable", "position", "script", "goals", "self_intro", "fixed_answer",
                  "is_murderer", "is_victim", "victim_position", "key_role", "extra"]
        old = self.old_characters
        self.old_characters = {}
        rows = self._sync(old, wanted, fields, "characters")
        self.old_characters = old  # leftovers may still be re-used as non-players below
        self.leftovers.pop()
        for key, row in zip([k for k, _ in wanted], rows, strict=True):
            self.characters[key] = row
        for row in rows:  # aliases resolve too
            for alias in row.aliases:
                self.characters.setdefault(ix.name_key(alias), row)
        for name in self.game.victims:
            if ix.name_key(name) not in self.characters:
                victim = self.character(name, create=True, why="listed as a victim")
                victim.is_victim = True
                victim.victim_position = victims[ix.name_key(name)]
                victim.save(update_fields=["is_victim", "victim_position"])

    def _kills(self) -> None:
        self.row.kills.all().delete()
        rows, seen = [], set()
        for kill in self.game.kills:
            killer = self.character(kill.killer, create=True, why="named as a killer")
            victim = self.character(kill.victim, create=True, why="named as a victim")
            if (killer.pk, victim.pk) in seen:
                continue
            seen.add((killer.pk, victim.pk))
            rows.append(m.Kill(game=self.row, killer=killer, victim=victim))
        m.Kill.objects.bulk_create(rows)

    def _clues(self) -> None:
        old = {c.key: c for c in self.row.clues.all()}
        wanted = []
        for position, clue in enumerate(self.game.clues):
            row = m.Clue(
                game=self.row, key=clue.key, kind=clue.kind, title=clue.title, text=clue.text,
                owner=self.character(clue.owner, create=True, why="owner of a clue") if clue.owner else None,
                position=position, filename=clue.filename, media_type=clue.media_type,
                sha256=clue.sha256 if clue.data else "", image_kind=clue.image_kind, ocr_text=clue.ocr_text,
                extra=ix.pack_key_order(clue.extra),
            )
            stored = old.get(clue.key)
            if stored is not None and stored.sha256 == row.sha256 and (stored.image or not clue.data):
                row.image = stored.image
            elif clue.data:
                # The storage name is content-addressed; the published file name is kept in `filename`.
                ext = (clue.filename.rsplit(".", 1)[-1] if "." in clue.filename else "bin").lower()[:5]
                row.image.save(f"{clue.sha256[:24]}.{ext}", ContentFile(clue.data), save=False)
            wanted.append((clue.key, row))
        fields = ["kind", "title", "text", "owner", "position", "filename", "image", "media_type", "sha256",
                  "image_kind", "ocr_text", "extra"]
        rows = self._sync(old, wanted, fields, "clues")
        self.clues = {row.key: row for row in rows}

    def _relationships(self) -> None:
        old: dict[tuple[int, int, int], m.Relationship] = {}
        for rel in self.row.relationships.all():
            n = sum(1 for k in old if k[:2] == (rel.source_id, rel.target_id))
            old[(rel.source_id, rel.target_id, n)] = rel
        wanted, seen = [], {}
        for position, rel in enumerate(self.game.relationships):
            source = self.character(rel.source, create=True, why="end of a relationship")
            target = self.character(rel.target, create=True, why="end of a relationship")
            n = seen[(source.pk, target.pk)] = seen.get((source.pk, target.pk), -1) + 1
            wanted.append(((source.pk, target.pk, n), m.Relationship(
                game=self.row, source=source, target=target, labels=list(rel.labels), note=rel.note,
                position=position, status=rel.status, author=self.user,
            )))
        rows = self._sync(old, wanted, ["source", "target", "labels", "note", "position", "status"], "relationships")
        self._attach_spans(
            m.Relationship.evidence.through, "relationship",
            [(row, rel.evidence) for row, rel in zip(rows, self.game.relationships, strict=True)],
        )

    def _chains(self) -> None:
        old_chains = {c.position: c for c in self.row.chains.all()}
        old_nodes = {(pos, n.key): n for pos, c in old_chains.items() for n in c.nodes.all()}
        chains = self._sync(old_chains, [
            (i, m.ReasoningChain(game=self.row, goal=c.goal, title=c.title, position=i, status=c.status, author=self.user))
            for i, c in enumerate(self.game.chains)
        ], ["goal", "title", "position", "status"], "chains")
        wanted: list[tuple[tuple[int, str], m.ChainNode]] = []
        sources: list[ix.ChainNode] = []
        for chain_row, chain in zip(chains, self.game.chains, strict=True):
            for position, node in enumerate(chain.nodes):
                clue = self.clues.get(node.image_clue) if node.image_clue else None
                if node.image_clue and clue is None:
                    self._problem(f"chain node '{node.key}' cites unknown clue '{node.image_clue}'", "link dropped")
                row = m.ChainNode(
                    chain=chain_row, key=node.key, kind=node.kind, text=node.text, level=node.level,
                    knowledge=node.knowledge, image_clue=clue, position=position, extra=ix.pack_key_order(node.extra),
                )
                wanted.append(((chain_row.position, node.key), row))
                sources.append(node)
        fields = ["chain", "kind", "text", "level", "knowledge", "image_clue", "position", "extra"]
        rows = self._sync(old_nodes, wanted, fields, "chain nodes")
        nodes = list(zip(rows, sources, strict=True))
        for (key, _), row in zip(wanted, rows, strict=True):
            self.nodes[key] = row
            if key[1] in self.nodes_by_key and self.nodes_by_key[key[1]].chain_id != row.chain_id:
                self._problem(f"chain node key '{key[1]}' is used in more than one chain",
                              "questions and key statements citing it link to the first chain; rename one")
            self.nodes_by_key.setdefault(key[1], row)
        parent_links = []
        through = m.ChainNode.parents.through
        through.objects.filter(from_chainnode__in=rows).delete()
        for (key, _), (row, node) in zip(wanted, nodes, strict=True):
            for parent_key in node.parents:
                parent = self.nodes.get((key[0], parent_key))
                if parent is None:
                    self._problem(f"chain node '{node.key}' cites unknown parent '{parent_key}'", "link dropped")
                    continue
                parent_links.append(through(from_chainnode=row, to_chainnode=parent))
        through.objects.bulk_create(parent_links)
        self._attach_spans(m.ChainNode.evidence.through, "chainnode", [(row, node.evidence) for row, node in nodes])

    def node_by_key(self, key: str) -> m.ChainNode | None:
        return self.nodes_by_key.get(key) if key else None

    def _key_statements(self) -> None:
        self.row.key_statements.all().delete()
        rows = [
            m.KeyStatement(
                game=self.row, owner_name=ks.owner, character=self.character(ks.owner, create=False),
                text=ks.text, node=self.node_by_key(ks.node), position=i,
            )
            for i, ks in enumerate(self.game.key_statements)
        ]
        unresolved = sorted({r.owner_name for r in rows if r.character is None})
        for name in unresolved:
            self._problem(f"key-statement owner '{name}' is not a character", "kept the published name, no link")
        m.KeyStatement.objects.bulk_create(rows)

    def _questions(self) -> None:
        old: dict[tuple[str, int], m.Question] = {}
        stored_count: dict[str, int] = {}
        for q in self.row.questions.order_by("position", "pk"):
            n = stored_count[q.kind] = stored_count.get(q.kind, -1) + 1
            old[(q.kind, n)] = q
        wanted, ordinals = [], {}
        for position, q in enumerate(self.game.questions):
            perspective = self.character(q.perspective, create=True, why="perspective of a question") if q.perspective else None
            clue = self.clues.get(q.image_clue) if q.image_clue else None
            if q.image_clue and clue is None:
                self._problem(f"question {position} cites unknown image clue '{q.image_clue}'", "link dropped")
            n = ordinals[q.kind] = ordinals.get(q.kind, -1) + 1
            stored = old.get((q.kind, n))
            provenance = {k: v for k, v in q.provenance.items() if stored is None or k not in LOADER_PROVENANCE}
            if stored is not None:  # what the loader derives from the stored row is not new content
                provenance.update({k: v for k, v in stored.provenance.items() if k in LOADER_PROVENANCE})
            wanted.append(((q.kind, n), m.Question(
                game=self.row, kind=q.kind, sub_type=q.sub_type, stem=q.stem, answer=q.answer, multi=q.multi,
                weight=q.weight, perspective=perspective, image_clue=clue, chain_node=self.node_by_key(q.chain_node),
                level=q.level, source=q.source, raw=q.raw, position=position, status=q.status,
                provenance=provenance, extra=ix.pack_key_order(q.extra), author=self.user,
            )))
        fields = ["sub_type", "stem", "answer", "multi", "weight", "perspective", "image_clue", "chain_node", "level",
                  "source", "raw", "position", "status", "provenance", "extra"]
        rows = self._sync(old, wanted, fields, "questions")
        old_options = {(o.question_id, o.position): o for o in m.Option.objects.filter(question__in=rows)}
        option_rows = [
            ((row.pk, i), m.Option(question=row, position=i, text=o.text, is_correct=o.correct, origin=o.origin,
                                   model_name=o.model, review=o.review))
            for row, q in zip(rows, self.game.questions, strict=True)
            for i, o in enumerate(q.options)
        ]
        self._sync(old_options, option_rows, ["text", "is_correct", "origin", "model_name", "review"], "options")
        self._attach_spans(
            m.Question.evidence.through, "question",
            [(row, q.evidence) for row, q in zip(rows, self.game.questions, strict=True)],
        )

    def _delete_leftovers(self) -> None:
        """Rows the source no longer has, children first; their now unlinked spans go with them."""
        for rows in [*reversed(self.leftovers), list(self.old_characters.values())]:
            if not rows:
                continue
            spans = list(m.EvidenceSpan.objects.filter(
                Q(questions__in=rows) if isinstance(rows[0], m.Question) else
                Q(relationships__in=rows) if isinstance(rows[0], m.Relationship) else
                Q(chain_nodes__in=rows) if isinstance(rows[0], m.ChainNode) else Q(pk__in=[])
            ).values_list("pk", flat=True))
            type(rows[0]).objects.filter(pk__in=[r.pk for r in rows]).delete()
            _delete_unlinked_spans(spans)

    def _reanchor_spans(self) -> None:
        """Every span of the game whose quote is no longer at its offsets moves to where the quote is now.

        A quote that is nowhere in its text any more cannot be placed: the span is kept with empty
        offsets (it points at nothing rather than at other words) and listed for a person to fix.
        """
        characters = {c.pk: c for c in self.row.characters.all()}
        clues = {c.pk: c for c in self.row.clues.all()}
        moved = []
        for span in self.row.spans.all():
            text = _text_of(self.row, span, characters, clues)
            if text[span.start:span.end] == span.quote and span.end > span.start:
                continue
            at = place_quote(text, span.quote, span.start)
            if at is None:
                if (span.start, span.end) != (0, 0):
                    span.start = span.end = 0
                    moved.append(span)
                self._problem(f"evidence span '{span.quote[:40]}' ({span.document}) no longer matches its text",
                              "kept without a position; place it again in the span editor", f"span {span.pk}")
                continue
            span.start, span.end = at, at + len(span.quote)
            moved.append(span)
        m.EvidenceSpan.objects.bulk_update(moved, ["start", "end"], batch_size=500)


def _delete_unlinked_spans(span_ids: list[int]) -> None:
    if span_ids:
        m.EvidenceSpan.objects.filter(
            pk__in=span_ids, questions=None, relationships=None, chain_nodes=None
        ).delete()
