"""Inter-annotator agreement in review: kappas on relationship labels (statistics in
``casebook.agreement``) and blind validation of approved multiple-choice questions.

Relationship labels are compared as whole label sets per ordered character pair ("a+b" is one
nominal category, an empty set is "none"), because WellPlay relations are multi-label and a pair
only counts as agreed when both annotators chose the same labels.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from annotate.models import Game, Question
from annotate.services import states
from casebook.agreement import (  # noqa: F401  (the statistics, re-exported for review's callers)
    AgreementError,
    Kappa,
    RelationshipAgreement,
    cohen_kappa,
    fleiss_from_ratings,
    fleiss_kappa,
    ratings_agreement,
)
from casebook.interchange import LETTERS, OptionReview, Status

from .models import LabelJudgement, ValidationAnswer

# ---- relationship labels ----------------------------------------------------------------------

def record_labels(game: Game, annotator, source, target, labels: Sequence[str]) -> LabelJudgement:
    """Save (or replace) one annotator's labels for a pair; labels are checked against Conan."""
    from annotate.services.relationships import RelationshipError, clean_labels

    if source.game_id != game.pk or target.game_id != game.pk:
        raise AgreementError("Both characters must belong to this game.")
    if source.pk == target.pk:
        raise AgreementError("A relationship needs two different characters.")
    clean: list[str] = []
    if [lb for lb in labels if str(lb).strip()]:
        try:
            clean = clean_labels(labels)
        except RelationshipError as exc:
            raise AgreementError(str(exc)) from exc
    judgement, _ = LabelJudgement.objects.update_or_create(
        annotator=annotator, source=source, target=target, defaults={"game": game, "labels": clean}
    )
    return judgement


def relationship_agreement(game: Game) -> RelationshipAgreement | None:
    """Kappa over pairs that every participating annotator labelled; None without two raters."""
    by_pair: dict[tuple[int, int], dict[str, str]] = defaultdict(dict)
    for j in LabelJudgement.objects.filter(game=game).select_related("annotator"):
        by_pair[(j.source_id, j.target_id)][j.annotator.get_username()] = j.category
    return ratings_agreement(by_pair)


# ---- blind validation ---------------------------------------------------------------------------

def shown_options(question: Question) -> list:
    """Options as exported (rejected generated options are left out), in order."""
    return [o for o in question.options.all() if o.review != OptionReview.REJECTED]


def key_of(question: Question) -> str:
    return "".join(LETTERS[i] for i, o in enumerate(shown_options(question)) if o.is_correct)


def normalize_letters(letters: str | Sequence[str], n_options: int) -> str:
    chosen = sorted({c.strip().lower() for c in letters if str(c).strip()})
    if not chosen:
        raise AgreementError("Choose at least one option.")
    bad = [c for c in chosen if c not in LETTERS[:n_options]]
    if bad:
        raise AgreementError(f"Not an option of this question: {', '.join(bad)}.")
    return "".join(chosen)


def validation_queue(game: Game, validator):
    """Approved multiple-choice questions the validator neither wrote nor approved (both saw the
    key) and has not answered yet at the current version."""
    answered = set(ValidationAnswer.objects.filter(validator=validator, question__game=game)
                   .values_list("question_id", "question_version"))
    qs = (Question.objects.filter(game=game, status=Status.APPROVED, options__isnull=False).distinct()
          .exclude(author=validator).exclude(reviewer=validator).order_by("position", "id").prefetch_related("options"))
    return [q for q in qs if (q.pk, q.version) not in answered]


@transaction.atomic
def record_validation(question: Question, validator, letters: str | Sequence[str]) -> ValidationAnswer:
    """Store a blind answer; when it differs from the key, send the question back to review
    (status submitted) with a comment saying what the validator chose."""
    question = Question.objects.select_for_update().select_related("game").get(pk=question.pk)
    if question.status != Status.APPROVED:
        raise AgreementError("Only approved questions are validated; this one is " + question.status + ".")
    if question.author_id is not None and question.author_id == validator.pk:
        raise AgreementError("Validate questions written by someone else.")
    if question.reviewer_id is not None and question.reviewer_id == validator.pk:
        raise AgreementError("You approved this question and have seen its key; another person must validate it.")
    options = shown_options(question)
    if len(options) < 2:
        raise AgreementError("This question has no options to choose from.")
    chosen = normalize_letters(letters, len(options))
    key = key_of(question)
    if ValidationAnswer.objects.filter(question=question, validator=validator, question_version=question.version).exists():
        raise AgreementError("You have already answered this version of the question.")
    answer = ValidationAnswer.objects.create(
        question=question, validator=validator, letters=chosen, key=key, agrees=chosen == key,
        question_version=question.version,
    )
    if not answer.agrees:
        states.send_back(
            question, validator,
            f"Blind validation by {validator.get_username()} chose {chosen.upper()}, the key is {key.upper() or '—'}. "
            "Check the stem, the options and the key.",
        )
    return answer


@dataclass
class QuestionValidation:
    question_id: int
    stem: str
    key: str
    answers: list[str]
    agreeing: int

    @property
    def rate(self) -> float:
        return self.agreeing / len(self.answers) if self.answers else 0.0


@dataclass
class ValidationSummary:
    questions: list[QuestionValidation]
    answers: int
    agreeing: int

    @property
    def rate(self) -> float | None:
        return self.agreeing / self.answers if self.answers else None


def validation_agreement(game: Game) -> ValidationSummary:
    """Per-question and overall agreement of blind answers with the key."""
    per: dict[int, QuestionValidation] = {}
    rows = ValidationAnswer.objects.filter(question__game=game).select_related("question", "validator")
    for v in rows.order_by("question__position", "question_id", "created_at"):
        qv = per.setdefault(v.question_id, QuestionValidation(v.question_id, v.question.stem, v.key, [], 0))
        qv.answers.append(f"{v.validator.get_username()}:{v.letters}")
        qv.agreeing += v.agrees
    total = sum(len(q.answers) for q in per.values())
    return ValidationSummary(list(per.values()), total, sum(q.agreeing for q in per.values()))
