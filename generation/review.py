"""Reviewing generated options: accept, edit or reject each one.

Every change goes through :func:`review_option`, which bumps the question's version, clears its
``raw`` published string (exporters re-render it) and recomputes the answer letters over the
options that will be exported (rejected ones are kept in the database for the record, but left
out of exports, which shifts the letters after them).
"""
from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet

from annotate.models import Game, Option, Question
from annotate.services import versions
from annotate.services.questions import snapshot as question_snapshot
from casebook import audit
from casebook.interchange import OptionOrigin, OptionReview

from .distractors import refresh_answer
from .offline import near_duplicate

ACTIONS = {"accept": OptionReview.ACCEPTED, "edit": OptionReview.EDITED, "reject": OptionReview.REJECTED}
GENERATED_ORIGINS = (OptionOrigin.LLM, OptionOrigin.HEURISTIC)


class ReviewError(ValueError):
    """The review action cannot be applied; the message is for the reviewer."""


def pending_options(game: Game) -> QuerySet[Option]:
    """Generated options of a game still waiting for review, question by question."""
    return (
        Option.objects.filter(question__game=game, origin__in=GENERATED_ORIGINS, review=OptionReview.PENDING)
        .select_related("question")
        .order_by("question__position", "question_id", "position", "id")
    )


def generated_options(game: Game) -> QuerySet[Option]:
    return (
        Option.objects.filter(question__game=game, origin__in=GENERATED_ORIGINS)
        .select_related("question")
        .order_by("question__position", "question_id", "position", "id")
    )


@transaction.atomic
def review_option(option: Option, action: str, *, text: str | None = None, user=None,
                  expected_version: int | None = None) -> Option:
    """Apply ``accept`` / ``edit`` (with ``text``) / ``reject`` to one option, under the version
    check (``expected_version``, else the version ``option`` was read at): a reviewer acting on an
    option someone else reviewed meanwhile gets ReviewError and changes nothing."""
    if action not in ACTIONS:
        raise ReviewError(f"unknown action {action!r}: use accept, edit or reject")
    loaded = option.version if expected_version is None else expected_version
    option = Option.objects.select_for_update().select_related("question__game").get(pk=option.pk)
    question: Question = option.question
    if action == "reject" and option.is_correct:
        raise ReviewError("this is the correct option; it cannot be rejected here")
    if option.origin not in GENERATED_ORIGINS:
        raise ReviewError("only generated options are reviewed here; change the question's own options in its editor")
    before = question_snapshot(question)
    if action == "edit":
        new_text = " ".join((text or "").split())
        if not new_text:
            raise ReviewError("the edited option is empty; reject it instead")
        others = [o.text for o in question.options.exclude(pk=option.pk).exclude(review=OptionReview.REJECTED)]
        clash = next((o for o in others if near_duplicate(new_text, o)), None)
        if clash is not None:
            raise ReviewError(f"the edited option repeats another option ({clash!r})")
        option.text = new_text
    try:
        versions.claim(option, loaded)
    except versions.VersionConflict as exc:
        raise ReviewError(f"someone reviewed this option meanwhile (it is now {exc.current.review}: "
                          f"{exc.current.text!r}); reload the page to see it") from None
    option.review = ACTIONS[action]
    option.save(update_fields=["text", "review", "version"])
    refresh_answer(question)
    # on the question, so its history shows who accepted, edited or rejected which generated option
    question = Question.objects.get(pk=question.pk)
    after = question_snapshot(question)
    after["_option"] = {"action": action, "text": option.text, "origin": option.origin}
    audit.record(question.game, user, question, f"option-{action}", before, after)
    return option
