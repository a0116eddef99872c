"""The one builder: writes an interchange ``Game`` into the database.

Everything goes in one transaction with bulk inserts, so an import either lands whole or not at
all, and its cost does not grow with one query per row. Re-importing the same content is a
no-op ("unchanged"); different content for an existing game is refused ("exists") unless
``replace`` is given, which rewrites the game's content but keeps the Game row, so memberships,
jobs and the link to the other language survive.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from django.core.files.base import ContentFile
from django.db import transaction
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
    return (
        m.Game.objects.filter(origin=game.origin, language=game.language, source_id=game.slug).first()
        or m.Game.objects.filter(slug=db_slug(game.slug, game.language), language=game.language).first()
    )


def _unique_slug(wanted: str, exclude_pk: int | None) -> str:
    slug, n = wanted, 2
    while m.Game.objects.filter(slug=slug).exclude(pk=exclude_pk).exists():
        slug = f"{wanted}-{n}"
        n += 1
    return slug


def build_game(game: ix.Game, *, replace: bool = False, user: Any = None) -> BuildResult:
    """Write ``game`` to the database; see the module docstring for the idempotency rules."""
    digest = game.content_hash()
    existing = find_existing(game)
    if existing is not None and existing.content_hash == digest:
        return BuildResult(existing, "unchanged")
    if existing is not None and not replace:
        problem = ix.Problem(
            file=game.slug,
            message=f"game '{existing.slug}' already exists with different content",
            action="kept the stored game; re-run with --replace to overwrite it",
            severity="error",
        )
        return BuildResult(existing, "exists", [problem])

    with transaction.atomic():
        if existing is not None:
            for relation in _CHILD_RELATIONS:
                getattr(existing, relation).all().delete()
            row = existing
            status = "replaced"
        else:
            row = m.Game(slug=_unique_slug(db_slug(game.slug, game.language), None))
            status = "created"
        problems = list(game.report)
        _fill_game_row(row, game, digest)
        row.save()
        _Writer(row, game, problems, user).write()
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
    row.extra = ix.pack_key_order({**game.extra, "victims": list(game.victims)})
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


class _Writer:
    """Bulk-writes the children of one game; names resolve through ``interchange.name_key``."""

    def __init__(self, row: m.Game, game: ix.Game, problems: list[ix.Problem], user: Any) -> None:
        self.row, self.game, self.problems, self.user = row, game, problems, user
        self.characters: dict[str, m.Character] = {}
        self.clues: dict[str, m.Clue] = {}
        self.nodes: dict[tuple[int, str], m.ChainNode] = {}
        self.nodes_by_key: dict[str, m.ChainNode] = {}  # first chain wins when keys repeat across chains

    def write(self) -> None:
        self._characters()
        self._kills()
        self._clues()
        self._relationships()
        self._chains()
        self._key_statements()
        self._questions()

    # -- helpers --------------------------------------------------------------------------
    def _problem(self, message: str, action: str, location: str = "") -> None:
        self.problems.append(ix.Problem(file=self.game.slug, message=message, action=action, location=location))

    def character(self, name: str, *, create: bool, why: str = "") -> m.Character | None:
        """The character called ``name`` (or with that alias); optionally created as a non-player."""
        if not name:
            return None
        key = ix.name_key(name)
        found = self.characters.get(key)
        if found is not None or not create:
            return found
        row = m.Character.objects.create(
            game=self.row, name=name, playable=False, position=len(self.characters)
        )
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
        """Create the spans and the M2M rows linking them to their owners, in two bulk inserts."""
        pending = [(owner, self.spans(spans)) for owner, spans in owners_and_spans if spans]
        all_rows = [row for _, rows in pending for row in rows]
        m.EvidenceSpan.objects.bulk_create(all_rows)
        links = [
            through(**{field_name: owner, "evidencespan": span}) for owner, rows in pending for span in rows
        ]
        through.objects.bulk_create(links)

    # -- stages ---------------------------------------------------------------------------
    def _characters(self) -> None:
        victims = {ix.name_key(v): i for i, v in enumerate(self.game.victims)}
        rows = []
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
            rows.append(row)
        m.Character.objects.bulk_create(rows)
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
        rows = []
        for position, clue in enumerate(self.game.clues):
            row = m.Clue(
                game=self.row, key=clue.key, kind=clue.kind, title=clue.title, text=clue.text,
                owner=self.character(clue.owner, create=True, why="owner of a clue") if clue.owner else None,
                position=position, filename=clue.filename, media_type=clue.media_type,
                sha256=clue.sha256 if clue.data else "", image_kind=clue.image_kind, ocr_text=clue.ocr_text,
                extra=ix.pack_key_order(clue.extra),
            )
            if clue.data:
                # The storage name is content-addressed; the published file name is kept in `filename`.
                ext = (clue.filename.rsplit(".", 1)[-1] if "." in clue.filename else "bin").lower()[:5]
                row.image.save(f"{clue.sha256[:24]}.{ext}", ContentFile(clue.data), save=False)
            self.clues[clue.key] = row
            rows.append(row)
        m.Clue.objects.bulk_create(rows)

    def _relationships(self) -> None:
        rows = []
        for position, rel in enumerate(self.game.relationships):
            source = self.character(rel.source, create=True, why="end of a relationship")
            target = self.character(rel.target, create=True, why="end of a relationship")
            rows.append(
                m.Relationship(
                    game=self.row, source=source, target=target, labels=list(rel.labels), note=rel.note,
                    position=position, status=rel.status, author=self.user,
                )
            )
        m.Relationship.objects.bulk_create(rows)
        self._attach_spans(
            m.Relationship.evidence.through, "relationship",
            [(row, rel.evidence) for row, rel in zip(rows, self.game.relationships, strict=True)],
        )

    def _chains(self) -> None:
        chains = [
            m.ReasoningChain(game=self.row, goal=c.goal, title=c.title, position=i, status=c.status, author=self.user)
            for i, c in enumerate(self.game.chains)
        ]
        m.ReasoningChain.objects.bulk_create(chains)
        nodes: list[tuple[m.ChainNode, ix.ChainNode]] = []
        for chain_row, chain in zip(chains, self.game.chains, strict=True):
            for position, node in enumerate(chain.nodes):
                clue = self.clues.get(node.image_clue) if node.image_clue else None
                if node.image_clue and clue is None:
                    self._problem(f"chain node '{node.key}' cites unknown clue '{node.image_clue}'", "link dropped")
                row = m.ChainNode(
                    chain=chain_row, key=node.key, kind=node.kind, text=node.text, level=node.level,
                    knowledge=node.knowledge, image_clue=clue, position=position, extra=ix.pack_key_order(node.extra),
                )
                nodes.append((row, node))
                self.nodes[(chain_row.position, node.key)] = row
                self.nodes_by_key.setdefault(node.key, row)
        m.ChainNode.objects.bulk_create([row for row, _ in nodes])
        parent_links = []
        through = m.ChainNode.parents.through
        for row, node in nodes:
            for parent_key in node.parents:
                parent = self.nodes.get((row.chain.position, parent_key))
                if parent is None:
                    self._problem(f"chain node '{node.key}' cites unknown parent '{parent_key}'", "link dropped")
                    continue
                parent_links.append(through(from_chainnode=row, to_chainnode=parent))
        through.objects.bulk_create(parent_links)
        self._attach_spans(m.ChainNode.evidence.through, "chainnode", [(row, node.evidence) for row, node in nodes])

    def node_by_key(self, key: str) -> m.ChainNode | None:
        return self.nodes_by_key.get(key) if key else None

    def _key_statements(self) -> None:
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
        rows: list[m.Question] = []
        for position, q in enumerate(self.game.questions):
            perspective = self.character(q.perspective, create=True, why="perspective of a question") if q.perspective else None
            clue = self.clues.get(q.image_clue) if q.image_clue else None
            if q.image_clue and clue is None:
                self._problem(f"question {position} cites unknown image clue '{q.image_clue}'", "link dropped")
            rows.append(
                m.Question(
                    game=self.row, kind=q.kind, sub_type=q.sub_type, stem=q.stem, answer=q.answer, multi=q.multi,
                    weight=q.weight, perspective=perspective, image_clue=clue, chain_node=self.node_by_key(q.chain_node),
                    level=q.level, source=q.source, raw=q.raw, position=position, status=q.status,
                    provenance=q.provenance, extra=ix.pack_key_order(q.extra), author=self.user,
                )
            )
        m.Question.objects.bulk_create(rows)
        options = [
            m.Option(
                question=row, position=i, text=o.text, is_correct=o.correct, origin=o.origin,
                model_name=o.model, review=o.review,
            )
            for row, q in zip(rows, self.game.questions, strict=True)
            for i, o in enumerate(q.options)
        ]
        m.Option.objects.bulk_create(options, batch_size=2000)
        self._attach_spans(
            m.Question.evidence.through, "question",
            [(row, q.evidence) for row, q in zip(rows, self.game.questions, strict=True)],
        )
