"""The review state machine and role checks: every transition, every role, illegal moves."""
from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotate.models import Question
from annotate.services import permissions, states
from casebook.interchange import Status
from casebook.models import AuditEntry
from review.models import Comment


def test_full_cycle_draft_submit_reject_resubmit_approve(anna_question, users):
    q, anna, rita = anna_question, users["anna"], users["rita"]
    v0 = q.version
    q = states.transition(q, "submit", anna)
    assert q.status == Status.SUBMITTED and q.version == v0 + 1
    q = states.transition(q, "reject", rita, reason="选项B与题干矛盾 / option B contradicts the stem")
    assert (q.status, q.reviewer, q.reject_reason) == (Status.REJECTED, rita, "选项B与题干矛盾 / option B contradicts the stem")
    comment = Comment.objects.get(item_type="question", item_id=q.pk)
    assert comment.author == rita and "选项B与题干矛盾" in comment.text
    q = states.transition(q, "submit", anna)  # resubmit
    assert q.status == Status.SUBMITTED and q.reject_reason == ""
    q = states.transition(q, "approve", rita)
    assert q.status == Status.APPROVED and q.reviewer == rita
    actions = list(AuditEntry.objects.filter(item_type="question", item_id=q.pk).order_by("id").values_list("action", flat=True))
    assert actions == ["submit", "reject", "submit", "approve"]
    last = AuditEntry.objects.filter(item_type="question", item_id=q.pk).first()
    assert (last.before["status"], last.after["status"], last.user) == ("submitted", "approved", rita)
    assert last.after["options"][0]["text"] == "林管家"


def test_withdraw_and_reopen(anna_question, users):
    q = states.transition(anna_question, "submit", users["anna"])
    q = states.transition(q, "withdraw", users["anna"])
    assert q.status == Status.DRAFT
    q = states.transition(states.transition(q, "submit", users["anna"]), "approve", users["rita"])
    with pytest.raises(states.TransitionError, match="reason"):
        states.transition(q, "reopen", users["rex"])
    q = states.transition(q, "reopen", users["rex"], reason="key looks wrong")
    assert q.status == Status.SUBMITTED and q.reviewer is None


@pytest.mark.parametrize("status,action", [
    (Status.DRAFT, "approve"), (Status.DRAFT, "reject"), (Status.DRAFT, "withdraw"), (Status.DRAFT, "reopen"),
    (Status.SUBMITTED, "submit"), (Status.SUBMITTED, "reopen"),
    (Status.APPROVED, "approve"), (Status.APPROVED, "reject"), (Status.APPROVED, "submit"), (Status.APPROVED, "withdraw"),
    (Status.REJECTED, "approve"), (Status.REJECTED, "reject"), (Status.REJECTED, "withdraw"), (Status.REJECTED, "reopen"),
])
def test_illegal_transitions_raise_clear_errors(anna_question, users, status, action):
    Question.objects.filter(pk=anna_question.pk).update(status=status)
    anna_question.refresh_from_db()
    with pytest.raises(states.TransitionError, match=f"Cannot {action} an item that is {status}"):
        states.transition(anna_question, action, users["mia"], reason="because")
    anna_question.refresh_from_db()
    assert anna_question.status == status  # nothing changed


def test_reject_needs_reason_and_unknown_action(anna_question, users):
    q = states.transition(anna_question, "submit", users["anna"])
    with pytest.raises(states.TransitionError, match="needs a reason"):
        states.transition(q, "reject", users["rita"], reason="   ")
    with pytest.raises(states.TransitionError, match="Unknown action"):
        states.transition(q, "publish", users["rita"])


# Expected outcome of (role, action) on anna's item in the matching source state; "own" = allowed
# only because anna is the author.
MATRIX = {
    "anna": {"submit": True, "withdraw": True, "approve": False, "reject": False, "reopen": False},
    "bob": {"submit": False, "withdraw": False, "approve": False, "reject": False, "reopen": False},
    "rita": {"submit": True, "withdraw": True, "approve": True, "reject": True, "reopen": True},
    "mia": {"submit": True, "withdraw": True, "approve": True, "reject": True, "reopen": True},
    "root": {"submit": True, "withdraw": True, "approve": True, "reject": True, "reopen": True},
    "otto": {"submit": False, "withdraw": False, "approve": False, "reject": False, "reopen": False},
}
SOURCE = {"submit": Status.DRAFT, "withdraw": Status.SUBMITTED, "approve": Status.SUBMITTED,
          "reject": Status.SUBMITTED, "reopen": Status.APPROVED}


@pytest.mark.parametrize("who", list(MATRIX))
@pytest.mark.parametrize("action", list(SOURCE))
def test_every_role_and_action(anna_question, users, who, action):
    Question.objects.filter(pk=anna_question.pk).update(status=SOURCE[action])
    anna_question.refresh_from_db()
    user = users[who]
    if MATRIX[who][action]:
        item = states.transition(anna_question, action, user, reason="r")
        assert item.status == states.TRANSITIONS[action][1]
    else:
        with pytest.raises(states.TransitionError):
            states.transition(anna_question, action, user, reason="r")
    assert (action in states.allowed_actions(anna_question, user)) is MATRIX[who][action]


def test_reviewer_cannot_approve_own_item_but_manager_can(game, users):
    q = game.questions.order_by("position")[1]
    Question.objects.filter(pk=q.pk).update(author=users["rita"], status=Status.SUBMITTED)
    q.refresh_from_db()
    with pytest.raises(states.TransitionError, match="own items"):
        states.transition(q, "approve", users["rita"])
    Question.objects.filter(pk=q.pk).update(author=users["mia"])
    q.refresh_from_db()
    assert states.transition(q, "approve", users["mia"]).status == Status.APPROVED


def test_stale_version_is_refused(anna_question, users):
    with pytest.raises(states.StaleVersion, match="reload"):
        states.transition(anna_question, "submit", users["anna"], expected_version=anna_question.version + 5)


def test_relationships_and_chains_share_the_machine(game, users):
    rel, chain = game.relationships.get(), game.chains.get()
    for item in (rel, chain):
        item = states.transition(item, "submit", users["rita"])
        item = states.transition(item, "approve", users["rex"])
        assert item.status == Status.APPROVED
    assert AuditEntry.objects.filter(item_type="relationship", action="approve").count() == 1
    assert AuditEntry.objects.filter(item_type="reasoningchain", action="approve").count() == 1


def test_bulk_approve_keeps_going_past_failures(game, users):
    qs = list(game.questions.order_by("position"))
    Question.objects.filter(pk__in=[q.pk for q in qs[:3]]).update(status=Status.SUBMITTED)
    result = states.bulk(Question.objects.filter(game=game), "approve", users["rita"])
    assert len(result.done) == 3 and len(result.failed) == 1
    assert "draft" in result.failed[0][1]
    assert Question.objects.filter(game=game, status=Status.APPROVED).count() == 3


# ---- permissions ----------------------------------------------------------------------------

def test_roles_and_404_403(game, users):
    assert permissions.role_of(users["anna"], game) == "annotator"
    assert permissions.role_of(users["root"], game) == "manager"
    assert permissions.role_of(users["otto"], game) is None
    with pytest.raises(Http404):
        permissions.require(users["otto"], game, "view")
    with pytest.raises(PermissionDenied, match="needs the manager role"):
        permissions.require(users["rita"], game, "assign")
    assert permissions.require(users["mia"], game, "assign") == "manager"
    assert permissions.require_role(game, users["rex"], "reviewer") == "reviewer"
    with pytest.raises(PermissionDenied):
        permissions.require_role(game, users["bob"], "reviewer")


def test_annotator_edits_only_own_draft_or_rejected(anna_question, users, game):
    anna, bob = users["anna"], users["bob"]
    assert permissions.can(anna, game, "edit", anna_question)
    assert not permissions.can(bob, game, "edit", anna_question)
    with pytest.raises(PermissionDenied, match="only their own"):
        permissions.require(bob, game, "edit", anna_question)
    for status, editable in [(Status.SUBMITTED, False), (Status.APPROVED, False), (Status.REJECTED, True)]:
        anna_question.status = status
        assert permissions.can(anna, game, "edit", anna_question) is editable
        assert permissions.can(users["rita"], game, "edit", anna_question)


def test_games_with_role(game, users):
    assert list(permissions.games_with_role(users["rita"], "reviewer")) == [game]
    assert not permissions.games_with_role(users["anna"], "reviewer").exists()
    assert permissions.games_with_role(users["root"], "manager").count() == 1


def test_a_span_label_conflict_is_resolved_by_choosing_the_label(span_conflict, users):
    """Spans have no review state: a SpanLabelConflict carries them through the queue, and only a
    resolution with a label of the game's set approves it (and sets the span's label)."""
    from review import services
    conflict, span = span_conflict, span_conflict.span
    listed = services.review_queue(users["rita"], item_type="spanlabelconflict").rows
    assert [r.item.pk for r in listed] == [conflict.pk] and listed[0].label == "“书房”: clue (ann@ls) / place (ben@ls)"
    bulk = states.bulk([conflict], "approve", users["rita"])  # no label chosen: refused, nothing set
    assert not bulk.done and "Choose the span's label" in bulk.failed[0][1]
    with pytest.raises(states.TransitionError, match="needs the reviewer role"):
        states.resolve_span_label(conflict, "place", users["anna"])
    with pytest.raises(states.TransitionError, match="not one of this game's span labels"):
        states.resolve_span_label(conflict, "weapon", users["rita"])
    with pytest.raises(states.StaleVersion):
        states.resolve_span_label(conflict, "place", users["rita"], expected_version=conflict.version - 1)
    span.refresh_from_db()
    assert (span.label, span.state) == ("clue", "draft")
    done = states.resolve_span_label(conflict, "place", users["rita"])
    span.refresh_from_db()
    assert (done.status, done.label, done.reviewer, span.label, span.state) == (Status.APPROVED, "place", users["rita"], "place", "live")
    assert list(AuditEntry.objects.filter(item_type="spanlabelconflict", item_id=conflict.pk).values_list("action", flat=True)
                .order_by("id")) == ["submit", "approve"]
