"""Relation MCQs generated from a game's relationship graph, following WellPlay's rules (§5.5).

For an edge "B is <labels> of A":
- 3 or more labels → "which relationship does not exist" (``non_existent``): three true labels and
  one false label, the false one is the answer;
- 2 labels → the two joined with "and" (``two``), against three pairs of false labels;
- 1 label → that label (``one``), against three false labels.

False labels come from *other* high-level Conan classes than the true ones, so a distractor can
never be a synonym of the answer; the identity labels (same person as, stranger to) are never asked.
Unlike the published set, every option names the same two people in the same order (the published
distractors flip the subject, a cue that gives the answer away) and no two options share a label.

Options are rendered with :func:`casebook.conan.render_relation_option` and **shuffled with a
seeded generator so that the answer letters are balanced** over the generated set (the published
set puts every "relationship" answer at a and every "non-existent" answer at d). Questions are
created as drafts, with origin ``heuristic`` options waiting for review.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Max

from annotate.models import Character, Game, Option, Question
from annotate.services.questions import snapshot as question_snapshot
from casebook import audit, conan
from casebook import interchange as ix

N_OPTIONS = 4
SKIPPED_CATEGORIES = {"Special relationships", "Unrelated"}
STEMS = {
    ("zh", "relation"): "【{a}】和【{b}】的关系是什么？",
    ("zh", "non_existent"): "【{a}】和【{b}】不存在的关系是什么？",
    ("en", "relation"): "What is the relationship between {a} and {b}?",
    ("en", "non_existent"): "What is the non-existent relationship between {a} and {b}?",
}


@dataclass
class Edge:
    source: str  # A
    target: str  # B: "B is <labels> of A"
    labels: list[str]


@dataclass
class RelationMCQ:
    source: str
    target: str
    sub_type: str  # one / two / non_existent
    stem: str
    options: list[tuple[str, bool]] = field(default_factory=list)
    perspective: str = ""

    @property
    def answer(self) -> str:
        return "".join(ix.LETTERS[i] for i, (_, correct) in enumerate(self.options) if correct)


def relationships_from_conan_graph(graph: dict[str, list[list[str]]]) -> list[ix.Relationship]:
    """A Conan / WellPlay G1 ``all.json`` graph as relationships: ``[B, "L1, L2"]`` under A → B is L of A."""
    out: list[ix.Relationship] = []
    for source, entries in graph.items():
        for entry in entries or []:
            if not isinstance(entry, (list, tuple)) or len(entry) < 2:
                continue
            labels = [conan.normalize_label(label) for label in str(entry[1]).split(",") if label.strip()]
            if labels:
                out.append(ix.Relationship(source=source, target=str(entry[0]), labels=labels))
    return out


def askable_labels(labels: list[str]) -> list[str]:
    """The labels worth a question: known to the taxonomy, not identity/unrelated ones, deduplicated."""
    out: list[str] = []
    for label in labels:
        fine = conan.normalize_label(label)
        category = conan.category_of(fine)
        if category is None or category in SKIPPED_CATEGORIES or fine in out:
            continue
        out.append(fine)
    return out


def _false_labels(true_labels: list[str], rng: random.Random) -> list[str]:
    used = {conan.category_of(label) for label in true_labels}
    pool = [label for label in conan.all_fine_labels()
            if conan.category_of(label) not in used | SKIPPED_CATEGORIES | {None}]
    rng.shuffle(pool)
    return pool


def _mcq(edge: Edge, language: str, rng: random.Random) -> RelationMCQ | None:
    labels = askable_labels(edge.labels)
    if not labels:
        return None
    a, b = edge.source, edge.target
    lang = "zh" if language == "zh" else "en"
    false = _false_labels(labels, rng)
    if len(labels) >= 3:
        true = rng.sample(labels, N_OPTIONS - 1)
        options = [(conan.render_relation_option(b, [label], a), False) for label in true]
        options.append((conan.render_relation_option(b, [false[0]], a), True))
        return RelationMCQ(a, b, "non_existent", STEMS[(lang, "non_existent")].format(a=a, b=b), options)
    k = len(labels)
    options = [(conan.render_relation_option(b, labels, a), True)]
    for i in range(N_OPTIONS - 1):
        options.append((conan.render_relation_option(b, false[i * k:(i + 1) * k], a), False))
    return RelationMCQ(a, b, "two" if k == 2 else "one", STEMS[(lang, "relation")].format(a=a, b=b), options)


def choose_perspective(a: str, b: str, playable: list[str], qa_character: dict[str, list[str]] | None) -> str:
    """Who is asked, as in WellPlay: the first player whose qa-character list names A (or B); else A or B
    when they are players; else the first player (WellPlay files every question under a player)."""
    keys = {ix.name_key(a), ix.name_key(b)}
    for player, people in (qa_character or {}).items():
        if any(ix.name_key(p) in keys for p in people) and any(ix.name_key(player) == ix.name_key(p) for p in playable):
            return player
    for name in (a, b):
        if any(ix.name_key(name) == ix.name_key(p) for p in playable):
            return name
    return playable[0] if playable else ""


def balanced_positions(count: int, n_options: int, rng: random.Random) -> list[int]:
    """Answer positions for ``count`` questions: every position used equally often (±1), in random order."""
    positions = [i % n_options for i in range(count)]
    rng.shuffle(positions)
    return positions


def plan_relation_questions(edges: list[Edge], *, language: str, playable: list[str], seed: int = 0,
                            qa_character: dict[str, list[str]] | None = None, perspective: str = "",
                            skip_stems: set[tuple[str, str]] | None = None) -> list[RelationMCQ]:
    """The MCQs for a graph (pure: no database). ``skip_stems`` holds (stem, perspective) already asked."""
    merged: dict[tuple[str, str], Edge] = {}
    for edge in edges:
        key = (ix.name_key(edge.source), ix.name_key(edge.target))
        if key[0] == key[1]:
            continue
        if key in merged:
            merged[key].labels += [label for label in edge.labels if label not in merged[key].labels]
        else:
            merged[key] = Edge(edge.source, edge.target, list(edge.labels))
    planned: list[RelationMCQ] = []
    for edge in merged.values():
        mcq = _mcq(edge, language, random.Random(f"{seed}|{edge.source}|{edge.target}"))
        if mcq is None:
            continue
        mcq.perspective = perspective or choose_perspective(edge.source, edge.target, playable, qa_character)
        if skip_stems and (mcq.stem, mcq.perspective) in skip_stems:
            continue
        planned.append(mcq)
    rng = random.Random(f"{seed}|positions")
    for mcq, position in zip(planned, balanced_positions(len(planned), N_OPTIONS, rng), strict=True):
        correct = [o for o in mcq.options if o[1]]
        wrong = [o for o in mcq.options if not o[1]]
        rng.shuffle(wrong)
        mcq.options = wrong[:position] + correct + wrong[position:]
    return planned


@dataclass
class CreateResult:
    created: list[Question] = field(default_factory=list)
    skipped: int = 0  # pairs already asked
    messages: list[str] = field(default_factory=list)


def _qa_character(game: Game) -> dict[str, list[str]]:
    extra: dict[str, Any] = game.extra or {}
    wellplay = extra.get("wellplay") if isinstance(extra.get("wellplay"), dict) else {}
    value = extra.get("qa_character") or wellplay.get("qa_character") or {}
    return value if isinstance(value, dict) else {}


@transaction.atomic
def create_relation_questions(game: Game, *, seed: int = 0, perspective: Character | None = None,
                              user=None) -> CreateResult:
    """Draft relation MCQs for every askable edge of the game's graph not yet asked (idempotent)."""
    characters = {c.pk: c for c in game.characters.all()}
    by_key = {ix.name_key(c.name): c for c in characters.values()}
    relationships = [r for r in game.relationships.all() if r.status != ix.Status.REJECTED]
    edges = [Edge(characters[r.source_id].name, characters[r.target_id].name, list(r.labels)) for r in relationships]
    existing = {
        (q.stem, characters[q.perspective_id].name if q.perspective_id in characters else "")
        for q in game.questions.filter(kind=ix.QuestionKind.RELATIONS)
    }
    planned_all = plan_relation_questions(
        edges, language=game.language, playable=[c.name for c in characters.values() if c.playable], seed=seed,
        qa_character=_qa_character(game), perspective=perspective.name if perspective else "",
    )
    planned = [q for q in planned_all if (q.stem, q.perspective) not in existing]
    if len(planned) != len(planned_all):
        # re-plan without the asked pairs so the answer positions stay balanced over what is created
        planned = plan_relation_questions(
            edges, language=game.language, playable=[c.name for c in characters.values() if c.playable], seed=seed,
            qa_character=_qa_character(game), perspective=perspective.name if perspective else "", skip_stems=existing,
        )
    result = CreateResult(skipped=len(planned_all) - len(planned))
    if not edges:
        result.messages.append("the game has no relationships: add some (or import the graph) first")
    start = (game.questions.aggregate(top=Max("position"))["top"] or 0) + 1
    author = user if getattr(user, "is_authenticated", False) else None
    for i, mcq in enumerate(planned):
        question = Question.objects.create(
            game=game, kind=ix.QuestionKind.RELATIONS, sub_type=mcq.sub_type, stem=mcq.stem, answer=mcq.answer,
            perspective=by_key.get(ix.name_key(mcq.perspective)) if mcq.perspective else None,
            position=start + i, status=ix.Status.DRAFT, author=author,
            provenance={"generator": "relations", "seed": seed, "pair": [mcq.source, mcq.target]},
        )
        Option.objects.bulk_create([
            Option(question=question, position=pos, text=text, is_correct=correct, origin=ix.OptionOrigin.HEURISTIC,
                   review=ix.OptionReview.ACCEPTED if correct else ix.OptionReview.PENDING)
            for pos, (text, correct) in enumerate(mcq.options)
        ])
        audit.record(game, user, question, "generate-relations", None, question_snapshot(question))
        result.created.append(question)
    return result
