"""The one loader: reads a game from the database back into the interchange model.

A fixed number of queries whatever the game's size (everything is prefetched), so exports and
evaluations of big games stay cheap.
"""
from __future__ import annotations

from django.db.models import Prefetch, Q, QuerySet

from casebook import interchange as ix

from . import models as m


def _span(span: m.EvidenceSpan, clue_keys: dict[int, str], names: dict[int, str]) -> ix.Span:
    owner = ""
    if span.character_id:
        owner = names.get(span.character_id, "")
    elif span.clue_id:
        owner = clue_keys.get(span.clue_id, "")
    return ix.Span(document=span.document, owner=owner, start=span.start, end=span.end, quote=span.quote,
                   label=span.label)


def game_queryset() -> QuerySet[m.Game]:
    return m.Game.objects.select_related("counterpart").prefetch_related(
        "characters",
        "kills",
        "clues",
        Prefetch("relationships", queryset=m.Relationship.objects.prefetch_related("evidence")),
        Prefetch(
            "chains",
            queryset=m.ReasoningChain.objects.prefetch_related(
                Prefetch("nodes", queryset=m.ChainNode.objects.prefetch_related("parents", "evidence"))
            ),
        ),
        "key_statements",
        Prefetch(
            "questions",
            queryset=m.Question.objects.select_related("author", "reviewer").prefetch_related("options", "evidence"),
        ),
    )


def resolve_game(game_or_slug: m.Game | str) -> m.Game:
    """A Game by model instance, DB slug or published id (``source_id``)."""
    if isinstance(game_or_slug, m.Game):
        return game_or_slug
    found = m.Game.objects.filter(Q(slug=game_or_slug) | Q(source_id=game_or_slug)).order_by("pk").first()
    if found is None:
        raise m.Game.DoesNotExist(f"no game with slug or id '{game_or_slug}'")
    return found


def load_game(
    game_or_slug: m.Game | str,
    *,
    statuses: tuple[str, ...] | None = None,
    with_images: bool = True,
) -> ix.Game:
    """Read one game. ``statuses`` keeps only questions/chains/relationships in those states."""
    row = game_queryset().get(pk=resolve_game(game_or_slug).pk)
    names = {c.pk: c.name for c in row.characters.all()}
    clue_keys = {c.pk: c.key for c in row.clues.all()}
    node_keys: dict[int, str] = {}
    for chain in row.chains.all():
        for node in chain.nodes.all():
            node_keys[node.pk] = node.key

    def keep(item: m.ReviewedItem) -> bool:
        return statuses is None or item.status in statuses

    extra = ix.unpack_key_order(row.extra)
    extra.pop("victims", None)  # stored by older builds; the characters' flags are the one source of truth
    victims = [c.name for c in sorted(
        (c for c in row.characters.all() if c.is_victim),
        key=lambda c: (c.victim_position is None, c.victim_position or 0, c.position),
    )]
    task_prompts = {"civilian": row.task_prompt_civilian, "murderer": row.task_prompt_murderer}
    task_prompts.update(extra.pop("task_prompts", {}))
    game = ix.Game(
        slug=row.source_id or row.slug,
        title=row.title,
        language=row.language,
        origin=row.origin,
        title_note=row.title_note,
        victims=list(victims),
        public_clue_text=row.public_clue_text,
        truth=ix.TruthManual(text=row.truth_text, motive=row.truth_motive, method=row.truth_method),
        task_prompts={k: v for k, v in task_prompts.items() if v},
        counterpart=(row.counterpart.source_id or row.counterpart.slug) if row.counterpart else "",
        extra=extra,
        report=[ix.Problem(**p) for p in row.import_report],
    )
    game.characters = [
        ix.Character(
            name=c.name, aliases=list(c.aliases), playable=c.playable, script=c.script, goals=list(c.goals),
            self_intro=c.self_intro, fixed_answer=c.fixed_answer, is_murderer=c.is_murderer, is_victim=c.is_victim,
            key_role=c.key_role, extra=ix.unpack_key_order(c.extra),
        )
        for c in row.characters.all()
    ]
    game.kills = [ix.Kill(killer=names[k.killer_id], victim=names[k.victim_id]) for k in row.kills.all()]
    game.clues = [_clue(c, names, with_images) for c in row.clues.all()]
    game.relationships = [
        ix.Relationship(
            source=names[r.source_id], target=names[r.target_id], labels=list(r.labels),
            evidence=[_span(s, clue_keys, names) for s in r.evidence.all()], note=r.note, status=r.status,
        )
        for r in row.relationships.all()
        if keep(r)
    ]
    game.chains = [
        ix.ReasoningChain(
            goal=chain.goal, title=chain.title, status=chain.status,
            nodes=[
                ix.ChainNode(
                    key=n.key, kind=n.kind, text=n.text, parents=[p.key for p in n.parents.all()], level=n.level,
                    evidence=[_span(s, clue_keys, names) for s in n.evidence.all()],
                    image_clue=clue_keys.get(n.image_clue_id, ""), knowledge=n.knowledge,
                    extra=ix.unpack_key_order(n.extra),
                )
                for n in chain.nodes.all()
            ],
        )
        for chain in row.chains.all()
        if keep(chain)
    ]
    game.key_statements = [
        ix.KeyStatement(owner=k.owner_name, text=k.text, node=node_keys.get(k.node_id, ""))
        for k in row.key_statements.all()
    ]
    hidden_reviews = {ix.OptionReview.REJECTED} | (set() if statuses is None else {ix.OptionReview.PENDING})
    kept = [q for q in row.questions.all() if keep(q)]
    game.questions = [_question(q, names, clue_keys, node_keys, hidden_reviews) for q in kept]
    _add_approvals(row, game.questions, [q.pk for q in kept])
    return game


def _add_approvals(row: m.Game, questions: list[ix.Question], pks: list[int]) -> None:
    """Who approved each approved question and when, from the audit log (one query)."""
    from casebook.audit import approvals

    approved = approvals(row)
    for q, pk in zip(questions, pks, strict=True):
        if q.status == ix.Status.APPROVED and pk in approved:
            q.provenance.update(approved[pk])


def _clue(c: m.Clue, names: dict[int, str], with_images: bool) -> ix.Clue:
    data = None
    if with_images and c.image:
        with c.image.open("rb") as fh:
            data = fh.read()
    return ix.Clue(
        key=c.key, kind=c.kind, title=c.title, text=c.text, owner=names.get(c.owner_id, ""),
        filename=c.filename, data=data, media_type=c.media_type, image_kind=c.image_kind, ocr_text=c.ocr_text,
        extra=ix.unpack_key_order(c.extra),
    )


def _question(
    q: m.Question,
    names: dict[int, str],
    clue_keys: dict[int, str],
    node_keys: dict[int, str],
    hidden_reviews: set[str],
) -> ix.Question:
    """One question; rejected options (and, for approved-only loads, unreviewed generated ones) are left out.

    Leaving an option out shifts the letters after it, so the answer is then re-derived from the
    options marked correct and the published string is dropped (the writer re-renders it).
    """
    provenance = dict(q.provenance)
    if q.author_id:
        provenance.setdefault("author", q.author.get_username())
    if q.reviewer_id:
        provenance["approved_by" if q.status == ix.Status.APPROVED else "reviewed_by"] = q.reviewer.get_username()
    all_options = list(q.options.all())
    options = [
        ix.Option(text=o.text, correct=o.is_correct, origin=o.origin, model=o.model_name, review=o.review)
        for o in all_options
        if o.review not in hidden_reviews
    ]
    answer, raw = q.answer, q.raw
    if len(options) != len(all_options):
        answer = "".join(ix.LETTERS[i] for i, o in enumerate(options) if o.correct)
        raw = ""
    return ix.Question(
        kind=q.kind, stem=q.stem,
        options=options,
        answer=answer, sub_type=q.sub_type, multi=q.multi, weight=q.weight,
        perspective=names.get(q.perspective_id, ""), image_clue=clue_keys.get(q.image_clue_id, ""),
        chain_node=node_keys.get(q.chain_node_id, ""), level=q.level, source=q.source,
        evidence=[_span(s, clue_keys, names) for s in q.evidence.all()], raw=raw, status=q.status,
        provenance=provenance, extra=ix.unpack_key_order(q.extra),
    )
