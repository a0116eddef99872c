"""Inter-annotator agreement: Cohen's kappa (two raters), Fleiss' kappa (more), and blind
validation of approved multiple-choice questions.

Relationship labels are compared as whole label sets per ordered character pair ("a+b" is one
nominal category, an empty set is "none"), because WellPlay relations are multi-label and a pair
only counts as agreed when both annotators chose the same labels.
"""
from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from django.db import transaction

from annotate.models import Game, Question
from casebook.interchange import LETTERS, OptionReview, Status

from . import states
from .models import LabelJudgement, ValidationAnswer


class AgreementError(ValueError):
    """The data cannot give an agreement figure, or an answer cannot be recorded; message for the user."""


@dataclass
class Kappa:
    """A kappa with its ingredients; ``kappa`` is None when chance agreement is 1 (all one category)."""

    kappa: float | None
    observed: float
    expected: float
    items: int
    raters: int
    categories: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        value = "n/a (every rating is the same category)" if self.kappa is None else f"{self.kappa:.3f}"
        return f"κ = {value}  (P_o = {self.observed:.3f}, P_e = {self.expected:.3f}, {self.items} items, {self.raters} raters)"


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> Kappa:
    """Cohen's (1960) kappa for two raters who rated the same items in the same order."""
    if len(a) != len(b):
        raise AgreementError(f"The two raters rated different numbers of items ({len(a)} and {len(b)}).")
    n = len(a)
    if n == 0:
        raise AgreementError("No item was rated by both annotators.")
    observed = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    ca, cb = Counter(a), Counter(b)
    cats = sorted(set(ca) | set(cb), key=str)
    expected = sum((ca[c] / n) * (cb[c] / n) for c in cats)
    kappa = None if expected >= 1 else (observed - expected) / (1 - expected)
    return Kappa(kappa, observed, expected, n, 2, [str(c) for c in cats])


def fleiss_kappa(table: Sequence[Sequence[int]], categories: Sequence[str] = ()) -> Kappa:
    """Fleiss' (1971) kappa from an items × categories table of counts (every row sums to the
    same number of raters n ≥ 2)."""
    rows = [list(r) for r in table]
    if not rows:
        raise AgreementError("No item was rated by all annotators.")
    n = sum(rows[0])
    if n < 2:
        raise AgreementError("Fleiss' kappa needs at least two ratings per item.")
    if any(sum(r) != n for r in rows) or any(len(r) != len(rows[0]) for r in rows):
        raise AgreementError("Every item must have the same number of ratings for Fleiss' kappa.")
    big_n = len(rows)
    p_i = [(sum(x * x for x in r) - n) / (n * (n - 1)) for r in rows]
    observed = sum(p_i) / big_n
    p_j = [sum(r[j] for r in rows) / (big_n * n) for j in range(len(rows[0]))]
    expected = sum(p * p for p in p_j)
    kappa = None if expected >= 1 else (observed - expected) / (1 - expected)
    return Kappa(kappa, observed, expected, big_n, n, list(categories))


def fleiss_from_ratings(ratings: Sequence[Sequence[Hashable]]) -> Kappa:
    """Fleiss' kappa from per-item lists of category labels (one per rater)."""
    cats = sorted({c for r in ratings for c in r}, key=str)
    return fleiss_kappa([[Counter(r)[c] for c in cats] for r in ratings], [str(c) for c in cats])


# ---- relationship labels ----------------------------------------------------------------------

@dataclass
class RelationshipAgreement:
    raters: list[str]
    items: int  # pairs labelled by every rater (the ones kappa uses)
    partial: int  # pairs labelled by some raters only (left out)
    overall: Kappa | None  # Cohen for two raters, Fleiss for more
    method: str
    pairwise: list[tuple[str, str, Kappa]] = field(default_factory=list)


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


def ratings_agreement(by_item: Mapping[Hashable, Mapping[str, Hashable]]) -> RelationshipAgreement | None:
    """Kappa over ``{item: {rater: category}}`` (Cohen for two raters, Fleiss for more) over the items
    every rater rated, with pairwise Cohen; None without two raters. Shared by Casebook's own label
    judgements and contributions from elsewhere (Label Studio annotations)."""
    raters = sorted({r for v in by_item.values() for r in v})
    if len(raters) < 2:
        return None
    complete = [v for v in by_item.values() if len(v) == len(raters)]
    pairwise = []
    for x, y in itertools.combinations(raters, 2):
        both = [v for v in by_item.values() if x in v and y in v]
        if both:
            pairwise.append((x, y, cohen_kappa([v[x] for v in both], [v[y] for v in both])))
    overall, method = None, "cohen" if len(raters) == 2 else "fleiss"
    if complete:
        if len(raters) == 2:
            overall = cohen_kappa([v[raters[0]] for v in complete], [v[raters[1]] for v in complete])
        else:
            overall = fleiss_from_ratings([[v[r] for r in raters] for v in complete])
    return RelationshipAgreement(raters, len(complete), len(by_item) - len(complete), overall, method, pairwise)


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
