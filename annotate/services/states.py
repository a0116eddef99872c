"""The review state machine for questions, reasoning chains and relationships.

    draft     --submit-->          submitted
    submitted --withdraw-->        draft        (the author takes it back)
    submitted --approve-->         approved
    submitted --reject(reason)-->  rejected
    rejected  --submit-->          submitted    (= resubmit, after fixing)
    approved  --reopen(reason)-->  submitted    (a reviewer, or a blind validator who disagreed)

Every transition checks the role (``annotate.services.permissions``), bumps ``version`` (so an
editor open on the old version gets a conflict instead of overwriting), writes an audit entry, and
— for reject/reopen — sends :data:`reason_given`, on which the review app writes a comment with the
reason so the author sees it in the item's thread (the domain does not import the review app).
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import models, transaction
from django.db.models import F
from django.dispatch import Signal

from annotate.models import Membership, Question, ReasoningChain, Relationship, ReviewedItem, SpanLabelConflict
from annotate.services import permissions
from annotate.services import spans as span_service
from annotate.services.questions import QuestionError, check_saved_ready_for_review
from casebook.audit import item_type
from casebook.interchange import Status

from .snapshots import record_change, snapshot_item

REVIEWED_MODELS = (Question, ReasoningChain, Relationship, SpanLabelConflict)

# Sent, inside the transition's transaction, when a transition or a conflict carries a reason:
# kwargs ``item``, ``item_type``, ``user`` (None for the workflow), ``text``, ``system``.
reason_given = Signal()

# action -> (allowed source states, target state)
TRANSITIONS: dict[str, tuple[frozenset[str], str]] = {
    "submit": (frozenset({Status.DRAFT, Status.REJECTED}), Status.SUBMITTED),
    "withdraw": (frozenset({Status.SUBMITTED}), Status.DRAFT),
    "approve": (frozenset({Status.SUBMITTED}), Status.APPROVED),
    "reject": (frozenset({Status.SUBMITTED}), Status.REJECTED),
    "reopen": (frozenset({Status.APPROVED}), Status.SUBMITTED),
}
NEEDS_REASON = {"reject", "reopen"}
LABELS = {"submit": "Submit", "withdraw": "Withdraw", "approve": "Approve", "reject": "Reject", "reopen": "Reopen"}
PAST = {"submit": "Submitted", "withdraw": "Withdrawn", "approve": "Approved", "reject": "Rejected", "reopen": "Reopened"}


class TransitionError(ValueError):
    """An illegal or unauthorised state change; the message says why, in words for the user."""


class StaleVersion(TransitionError):
    """The item changed since the page was loaded."""


@dataclass
class BulkResult:
    done: list[models.Model]
    failed: list[tuple[models.Model, str]]


def allowed_actions(item: models.Model, user, *, role: str | None = None) -> list[str]:
    """Actions the user may take on the item in its current state (for buttons)."""
    out = []
    for action, (sources, _) in TRANSITIONS.items():
        if item.status in sources and _permission_problem(item, action, user, role) is None:
            out.append(action)
    return out


def _permission_problem(item, action: str, user, role: str | None) -> str | None:
    role = role if role is not None else permissions.role_of(user, item.game)
    if role is None:
        return "You are not a member of this game."
    if not permissions.can(user, item.game, action, item, role=role):
        if permissions.has_role(role, permissions.ACTIONS[action]):
            return f"Only the author (or a reviewer) may {action} this item."
        return f"'{action}' needs the {permissions.ACTIONS[action]} role; you are {role}."
    if action in {"approve", "reject"} and item.author_id == user.pk and not permissions.has_role(role, permissions.MANAGER):
        return "Reviewers cannot approve or reject their own items; ask another reviewer."
    return None


def _check_shape(item) -> None:
    # Any ReviewedItem (status/author/reviewer/version + a game) follows this machine, e.g. the
    # turn annotations of played sessions (playlogs), without review importing those apps.
    if not isinstance(item, ReviewedItem):
        raise TransitionError(f"{type(item).__name__} has no review state.")


@transaction.atomic
def transition(item: models.Model, action: str, user, *, reason: str = "",
               expected_version: int | None = None) -> models.Model:
    """Apply ``action`` for ``user``; raises TransitionError (illegal, unauthorised, missing reason)."""
    _check_shape(item)
    if action not in TRANSITIONS:
        raise TransitionError(f"Unknown action {action!r}; expected one of {', '.join(TRANSITIONS)}.")
    locked = type(item).objects.select_for_update().select_related("game").get(pk=item.pk)
    if expected_version is not None and locked.version != expected_version:
        raise StaleVersion(f"This item was changed by someone else (now version {locked.version}); reload and look again.")
    problem = _permission_problem(locked, action, user, None) or _readiness_problem(locked, action)
    if problem:
        raise TransitionError(problem)
    return _apply(locked, action, user, reason=reason)


def _readiness_problem(item, action: str) -> str | None:
    """What the editor checks before "Save and submit" holds on every path into (and through) review:
    the queue's Submit and Approve buttons, bulk approve and the keyboard review alike."""
    if action not in {"submit", "approve"} or not isinstance(item, Question):
        return None
    try:
        check_saved_ready_for_review(item)
    except QuestionError as exc:
        return str(exc)
    return None


def _apply(item: models.Model, action: str, user, *, reason: str = "", system: bool = False) -> models.Model:
    """Move ``item`` (already locked) along ``action``; no permission check (callers do that)."""
    sources, target = TRANSITIONS[action]
    if item.status not in sources:
        allowed = sorted(a for a, (s, _) in TRANSITIONS.items() if item.status in s)
        raise TransitionError(
            f"Cannot {action} an item that is {item.status}"
            + (f"; from {item.status} you can {' or '.join(allowed)}." if allowed else ".")
        )
    reason = (reason or "").strip()
    if action == "approve" and isinstance(item, SpanLabelConflict) and not item.label:
        raise TransitionError("Choose the span's label on the conflict's page to resolve it (approving alone sets none).")
    if action in NEEDS_REASON and not reason:
        raise TransitionError(f"Say why: {action} needs a reason the author can act on.")
    before = snapshot_item(item)
    item.status = target
    if action in {"approve", "reject"}:
        item.reviewer = user if getattr(user, "is_authenticated", False) else None
    if action == "reject":
        item.reject_reason = reason
    elif action in {"approve", "submit"}:
        item.reject_reason = ""
    elif action == "reopen":
        item.reject_reason = reason
        item.reviewer = None
    item.version = F("version") + 1
    item.save(update_fields=["status", "reviewer", "reject_reason", "version", "updated_at"])
    item.refresh_from_db()
    after = snapshot_item(item)
    if reason:
        after["_reason"] = reason
    record_change(item.game, user, item, action, before, after)
    if reason:
        reason_given.send(type(item), item=item, item_type=item_type(item),
                          user=user if getattr(user, "is_authenticated", False) else None,
                          text=f"{PAST[action]}: {reason}", system=system)
    return item


def bulk(items, action: str, user, *, reason: str = "") -> BulkResult:
    """Apply one action to many items; each succeeds or fails alone (a failure loses nothing else)."""
    result = BulkResult([], [])
    for item in items:
        try:
            result.done.append(transition(item, action, user, reason=reason))
        except TransitionError as exc:
            result.failed.append((item, str(exc)))
    return result


def send_back(item: models.Model, user, reason: str) -> models.Model:
    """Workflow-initiated reopen (e.g. a blind validator disagreed): approved → submitted with a
    system comment; no role check, because the workflow itself asks for it."""
    _check_shape(item)
    with transaction.atomic():
        locked = type(item).objects.select_for_update().select_related("game").get(pk=item.pk)
        return _apply(locked, "reopen", user, reason=reason, system=True)


def flag_conflict(item: models.Model, user, reason: str) -> models.Model:
    """Annotators disagree about ``item`` (e.g. several Label Studio annotations): put it in the
    review queue (draft/rejected → submitted, approved → reopened) with a system comment saying
    who chose what; an item already submitted just gets the comment."""
    _check_shape(item)
    reason = f"Conflict: {reason}"
    with transaction.atomic():
        locked = type(item).objects.select_for_update().select_related("game").get(pk=item.pk)
        action = {Status.DRAFT: "submit", Status.REJECTED: "submit", Status.APPROVED: "reopen"}.get(locked.status)
        if action is None:
            reason_given.send(type(locked), item=locked, item_type=item_type(locked), user=None, text=reason, system=True)
            return locked
        return _apply(locked, action, user, reason=reason, system=True)


def withdraw_conflict(item: models.Model, user, reason: str) -> models.Model:
    """The disputed item went away at its source (e.g. a span deleted in Label Studio): take the
    conflict out of the review queue (submitted → draft) with a system comment saying why."""
    _check_shape(item)
    with transaction.atomic():
        locked = type(item).objects.select_for_update().select_related("game").get(pk=item.pk)
        if locked.status != Status.SUBMITTED:
            reason_given.send(type(locked), item=locked, item_type=item_type(locked), user=None,
                              text=f"{PAST['withdraw']}: {reason}", system=True)
            return locked
        return _apply(locked, "withdraw", user, reason=reason, system=True)


def resolve_span_label(item: SpanLabelConflict, label: str, user, *, expected_version: int | None = None) -> SpanLabelConflict:
    """Resolve a span-label conflict: set the span's label to ``label`` (one of the game's set), mark
    a draft span checked (live) and approve the conflict, in one transaction with the usual checks
    (reviewer role, not one's own item, version)."""
    _check_shape(item)
    with transaction.atomic():
        locked = SpanLabelConflict.objects.select_for_update().select_related("game", "span").get(pk=item.pk)
        if expected_version is not None and locked.version != expected_version:
            raise StaleVersion(f"This item was changed by someone else (now version {locked.version}); reload and look again.")
        problem = _permission_problem(locked, "approve", user, None)
        if problem:
            raise TransitionError(problem)
        if locked.status not in TRANSITIONS["approve"][0]:
            raise TransitionError(f"Cannot resolve a conflict that is {locked.status}; it is resolved when approved.")
        label = (label or "").strip()
        if not label:
            raise TransitionError("Choose the label the span should carry.")
        role = permissions.role_of(user, locked.game) or Membership.Role.REVIEWER
        try:
            span = span_service.update_span(locked.game, locked.span_id, label=label, user=user, role=role)
        except span_service.SpanError as exc:
            raise TransitionError(str(exc)) from exc
        if span.state == "draft":  # a reviewer has looked at it now
            type(span).objects.filter(pk=span.pk).update(state="live")
        locked.label = label
        locked.save(update_fields=["label"])
        return _apply(locked, "approve", user, reason="")
