"""Question editing: validation per kind, options, evidence, and the optimistic version check.

Saving bumps ``version`` with a compare-and-set UPDATE, so two tabs that loaded version 3 cannot
both save over each other: the second gets :class:`VersionConflict` carrying the current saved
state, and its own input is handed back untouched. Every edit clears ``raw`` so exporters render
the question from the structured fields, and marks ``provenance.edited``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from annotate.models import ChainNode, Character, Clue, EvidenceSpan, Game, Option, Question
from annotate.services import versions
from annotate.services.chains import chain_graph
from annotate.services.versions import VersionConflict  # noqa: F401  (re-exported for the editor)
from casebook import audit
from casebook.interchange import (
    DEFAULT_WEIGHTS,
    LETTERS,
    SUB_TYPES,
    WHODUNITBENCH_KINDS,
    OptionOrigin,
    OptionReview,
    QuestionKind,
    Status,
)

# Kinds answered by free text rather than options.
FREE_TEXT_KINDS = {QuestionKind.OPEN_ENDED, QuestionKind.FACTUAL, QuestionKind.INFERENTIAL}
# WhodunitBench stores a single answer letter; WellPlay and generic items may accept several.
SINGLE_ANSWER_KINDS = set(WHODUNITBENCH_KINDS)
IMAGE_KINDS = {QuestionKind.TEXT_IMAGE, QuestionKind.MEDIA_IMAGE}
KIND_LABELS = {
    QuestionKind.OBJECTIVE: "WellPlay · Objective",
    QuestionKind.REASONING: "WellPlay · Reasoning",
    QuestionKind.RELATIONS: "WellPlay · Relations",
    QuestionKind.LONG_SCRIPT: "WhodunitBench · Long script",
    QuestionKind.TEXT_IMAGE: "WhodunitBench · Text-rich image",
    QuestionKind.MEDIA_IMAGE: "WhodunitBench · Media-rich image",
    QuestionKind.MULTI_STEP: "WhodunitBench · Multi-step",
    QuestionKind.OPEN_ENDED: "WhodunitBench · Open-ended",
    QuestionKind.FACTUAL: "Factual",
    QuestionKind.INFERENTIAL: "Inferential",
}


class QuestionError(ValueError):
    """The input cannot be saved as it is; the message is meant for the annotator."""


@dataclass
class QuestionInput:
    """What the editor submits (ids are checked against the game)."""

    kind: str
    stem: str
    sub_type: str = ""
    options: list[tuple[str, bool]] = field(default_factory=list)  # (text, correct) in order
    answer: str = ""  # free-text answer (open-ended, factual, inferential conclusion)
    premises: list[str] = field(default_factory=list)  # inferential
    multi: bool = False
    weight: int | None = None
    perspective_id: int | None = None
    image_clue_id: int | None = None
    chain_node_id: int | None = None
    evidence_ids: list[int] = field(default_factory=list)
    status: str = Status.DRAFT


# Options an export of approved items leaves out (loader ``hidden_reviews``): they carry no letter.
NOT_EXPORTED = frozenset({OptionReview.PENDING, OptionReview.REJECTED})


def lettered_options(options: list[Option]) -> tuple[list[tuple[str, Option]], list[Option]]:
    """``([(letter, option)…], held_back)``: the options an export writes, with the letters it gives
    them, and those it leaves out (generated ones awaiting review, rejected ones). The editor, the
    question list and the review page show these, so their letters are the export's letters."""
    ordered = sorted(options, key=lambda o: (o.position, o.pk or 0))
    exported = [o for o in ordered if o.review not in NOT_EXPORTED]
    return list(zip(LETTERS, exported, strict=False)), [o for o in ordered if o.review in NOT_EXPORTED]


def option_snapshot(option: Option) -> dict:
    """The one shape of an option in audit snapshots (editor, generation, review and revert read it)."""
    return {"text": option.text, "correct": option.is_correct, "origin": option.origin, "model": option.model_name,
            "review": option.review}


def snapshot(question: Question, options: list[Option] | None = None) -> dict:
    """Question fields plus its options (``options`` when the caller already holds them) and evidence
    ids, for the audit log, the review history and the conflict view."""
    if options is None:
        options = list(question.options.all())
    options = sorted(options, key=lambda o: (o.position, o.pk or 0))
    return audit.snapshot(question, options=[option_snapshot(o) for o in options],
                          evidence=sorted(e.pk for e in question.evidence.all()))


def _clean(game: Game, data: QuestionInput) -> dict:
    """Check the input for the kind; returns the resolved foreign objects."""
    if data.kind not in set(QuestionKind):
        raise QuestionError(f"Unknown question kind {data.kind!r}.")
    if not data.stem.strip():
        raise QuestionError("The question needs a stem.")
    if data.status not in set(Status):
        raise QuestionError(f"Unknown status {data.status!r}.")
    known_sub = SUB_TYPES.get(data.kind, ())
    if known_sub and data.sub_type and data.sub_type not in known_sub:
        raise QuestionError(f"Sub-type {data.sub_type!r} is not one of {', '.join(known_sub)}.")
    if data.weight is not None and not 0 < data.weight <= 1000:
        raise QuestionError("The weight must be a positive whole number.")
    resolved: dict = {"perspective": None, "image_clue": None, "chain_node": None, "level": None}
    if data.perspective_id:
        resolved["perspective"] = Character.objects.filter(game=game, pk=data.perspective_id).first()
        if resolved["perspective"] is None:
            raise QuestionError("The perspective character is not part of this game.")
    if data.image_clue_id:
        resolved["image_clue"] = Clue.objects.filter(game=game, pk=data.image_clue_id).first()
        if resolved["image_clue"] is None:
            raise QuestionError("The image clue is not part of this game.")
    if data.kind == QuestionKind.MEDIA_IMAGE and resolved["image_clue"] is None:
        raise QuestionError("A media-rich image question must be linked to its image clue.")
    if data.chain_node_id:
        node = ChainNode.objects.select_related("chain").filter(chain__game=game, pk=data.chain_node_id).first()
        if node is None:
            raise QuestionError("The chain node is not part of this game.")
        _, _, levels = chain_graph(node.chain)
        resolved["chain_node"], resolved["level"] = node, levels.get(node.pk)
    if data.kind == QuestionKind.MULTI_STEP and resolved["chain_node"] is None:
        raise QuestionError("A multi-step question must be linked to a reasoning-chain node.")
    ids = sorted(set(data.evidence_ids))
    if len(EvidenceSpan.objects.filter(game=game, pk__in=ids)) != len(ids):
        raise QuestionError("Some evidence spans are not part of this game.")
    if data.kind in FREE_TEXT_KINDS:
        if not data.answer.strip():
            raise QuestionError("Write the expected answer.")
        if data.kind == QuestionKind.FACTUAL and not ids:
            raise QuestionError("A factual question cites its source span.")
        if data.kind == QuestionKind.INFERENTIAL and not [p for p in data.premises if p.strip()]:
            raise QuestionError("An inferential question lists the premises it rests on.")
    else:
        options = [(t.strip(), c) for t, c in data.options if t.strip()]
        if len(options) < 2 and data.status != Status.DRAFT:
            raise QuestionError("A multiple-choice question needs at least two options.")
        if not options:
            raise QuestionError("Write the correct option (a draft may have only that one; generate the others later).")
        if len(options) > len(LETTERS):
            raise QuestionError(f"At most {len(LETTERS)} options.")
        correct = sum(1 for _, c in options if c)
        if correct == 0:
            raise QuestionError("Mark the correct option.")
        if correct > 1 and data.kind in SINGLE_ANSWER_KINDS:
            raise QuestionError("WhodunitBench questions have exactly one correct option.")
        resolved["options"] = options
    return resolved


def check_ready_for_review(data: QuestionInput) -> None:
    """What a draft needs before it is submitted: a multiple-choice question needs two options."""
    _require_two_options(data.kind, [t for t, _ in data.options])


def check_saved_ready_for_review(question: Question) -> None:
    """The same rule on a saved question (the review queue's submit/approve): only the options
    that will be exported count, so generated ones awaiting review do not make up the two."""
    exported = [o.text for o in question.options.all() if o.review not in NOT_EXPORTED]
    _require_two_options(question.kind, exported)


def _require_two_options(kind: str, texts: list[str]) -> None:
    if kind not in FREE_TEXT_KINDS and len([t for t in texts if t.strip()]) < 2:
        raise QuestionError("A multiple-choice question needs at least two options before it is submitted. "
                            "Save it as a draft and add wrong options (or generate them) first.")


def save_question(
    game: Game, question: Question | None, data: QuestionInput, *, expected_version: int | None = None, user=None
) -> Question:
    """Create (``question=None``) or update a question; raises QuestionError or VersionConflict."""
    resolved = _clean(game, data)
    if question is not None:
        versions.claim(question, expected_version, Question.objects.prefetch_related("options", "evidence"))
        before = snapshot(question)
    else:
        before = None
        last = Question.objects.filter(game=game).order_by("-position").values_list("position", flat=True).first()
        question = Question(game=game, position=(last or 0) + 1, author=user if getattr(user, "is_authenticated", False) else None)
    question.kind, question.sub_type, question.stem = data.kind, data.sub_type, data.stem.strip()
    question.multi = data.multi and data.kind not in SINGLE_ANSWER_KINDS
    question.weight = data.weight
    question.perspective, question.image_clue = resolved["perspective"], resolved["image_clue"]
    question.chain_node, question.level = resolved["chain_node"], resolved["level"]
    question.status = data.status
    question.raw = ""  # edited: exporters render from the structured fields
    if before is not None:
        question.provenance = edited_provenance(question.provenance)
    extra = dict(question.extra or {})
    if data.kind == QuestionKind.INFERENTIAL:
        extra["premises"] = [p.strip() for p in data.premises if p.strip()]
    else:
        extra.pop("premises", None)
    question.extra = extra
    if data.kind in FREE_TEXT_KINDS:
        question.answer = data.answer.strip()
        options: list[tuple[str, bool]] = []
    else:
        options = resolved["options"]
        question.answer = "".join(LETTERS[i] for i, (_, c) in enumerate(options) if c)
    question.save()
    _replace_options(question, options)
    question.evidence.set(sorted(set(data.evidence_ids)))
    question._prefetched_objects_cache = {}
    audit.record(game, user, question, "update" if before else "create", before, snapshot(question))
    return question


def edited_provenance(provenance: dict | None) -> dict:
    """``provenance`` marked as edited in Casebook: validation then holds the item to the strict rules.

    Every path that changes an imported question goes through this (published items keep their
    known irregularities only while unedited; see ``exporters.validate.is_published_unedited``).
    """
    return {**(provenance or {}), "edited": True}


def _replace_options(question: Question, options: list[tuple[str, bool]]) -> None:
    """Keep option rows (and their origin/review) where the text is unchanged; rewrite the rest.

    ``options`` are the exported options (the editor shows only those); options awaiting review
    or rejected are kept as they are, after them, so the letters stay the export's letters.
    """
    if not options:  # a free-text question has no options at all, held-back ones included
        question.options.all().delete()
        return
    lettered, held_back = lettered_options(list(question.options.all()))
    old = {o.text: o for _, o in lettered}
    keep, new = [], []
    for position, (text, correct) in enumerate(options):
        row = old.pop(text, None)
        if row is None:
            new.append(Option(question=question, position=position, text=text, is_correct=correct, origin=OptionOrigin.HUMAN))
        else:
            row.position, row.is_correct = position, correct
            keep.append(row)
    for position, row in enumerate(held_back, start=len(options)):
        row.position = position
        keep.append(row)
    if old:
        Option.objects.filter(pk__in=[o.pk for o in old.values()]).delete()
    if keep:
        Option.objects.bulk_update(keep, ["position", "is_correct"])
    if new:
        Option.objects.bulk_create(new)


def effective_weight(question: Question) -> int:
    return question.weight if question.weight is not None else DEFAULT_WEIGHTS.get(question.kind, 1)


@transaction.atomic
def delete_question(question: Question, user=None) -> None:
    before = snapshot(question)
    game, pk = question.game, question.pk
    question.delete()
    question.pk = pk
    audit.record(game, user, question, "delete", before, None)
