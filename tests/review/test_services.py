"""Queue, assignment scopes and dashboard figures computed from the audit log."""
from __future__ import annotations

import datetime

import pytest
from django.core.management.base import CommandError
from django.utils import timezone

from annotate.models import Question
from annotate.services import permissions, states
from casebook.interchange import Status
from casebook.models import AuditEntry
from review import services


def test_median_wait_from_submit_to_decision(game, users):
    qs = list(game.questions.order_by("position")[:3])
    Question.objects.filter(pk__in=[q.pk for q in qs]).update(author=users["anna"])
    now = timezone.now()
    for q, hours in zip(qs, (1, 3, 8), strict=True):
        q.refresh_from_db()
        states.transition(q, "submit", users["anna"])
        AuditEntry.objects.filter(item_id=q.pk, item_type="question", action="submit").update(
            at=now - datetime.timedelta(hours=hours))
        states.transition(q, "approve" if hours != 8 else "reject", users["rita"], reason="模糊")
    assert services.hours_to_decision(game) == pytest.approx(3.0, abs=0.01)
    per_day, per_reviewer = services.throughput(game)
    assert per_reviewer == [("rita", 2, 1)] and sum(a for _, a, _ in per_day) == 2


def test_assignment_scopes(game, users):
    manor = game.characters.get(name="林管家")
    a = services.create_assignment(game, users["mia"], assignee="anna", kind="questions", character_id=manor.pk, target=4)
    assert services.progress(a).total == 4  # every question of the small game is asked of 林管家
    Question.objects.filter(game=game).update(status=Status.APPROVED)
    assert services.progress(a).percent == 100
    r = services.create_assignment(game, users["mia"], assignee="bob", kind="relationships", character_id=manor.pk)
    assert services.progress(r).total == 1
    open_ = services.create_assignment(game, users["mia"], assignee="bob", kind="chains", target=2)
    assert services.progress(open_).total == 0  # bob wrote no chain yet
    with pytest.raises(services.WorkflowError, match="question assignments only"):
        services.create_assignment(game, users["mia"], assignee="bob", kind="chains", first=1)
    with pytest.raises(services.WorkflowError, match="Unknown question kind"):
        services.create_assignment(game, users["mia"], assignee="bob", kind="questions", question_kind="essay")
    services.delete_assignment(game, users["mia"], a.pk)
    assert AuditEntry.objects.filter(item_type="assignment", action="unassign").count() == 1


def test_counts_by_kind_and_person(game, users, anna_question):
    states.transition(anna_question, "submit", users["anna"])
    states.transition(anna_question, "reject", users["rita"], reason="no")
    counts = services.counts_by_kind(game)
    assert counts["objective"] == {"draft": 3, "submitted": 0, "approved": 0, "rejected": 1}
    assert counts["relationship"]["draft"] == 1 and counts["chain"]["draft"] == 1
    person = services.person_dashboard(game, users["anna"])
    assert person.rejection_rate == 1.0 and [r.item.pk for r in person.rejected] == [anna_question.pk]


def test_command_user_checks(game, users):
    assert permissions.command_user("", game, "export") is None
    assert permissions.command_user("mia", game, "export") == users["mia"]
    with pytest.raises(CommandError, match="needs the manager role"):
        permissions.command_user("rita", game, "export")
    with pytest.raises(CommandError, match="not a member"):
        permissions.command_user("otto", game, "view")
    with pytest.raises(CommandError, match="No user"):
        permissions.command_user("ghost", game, "view")


def test_queue_pages_merge_types_in_order(game, users):
    extra = [Question(game=game, kind="objective", stem=f"题{i}", status=Status.SUBMITTED, author=users["anna"],
                      position=10 + i) for i in range(120)]
    Question.objects.bulk_create(extra)
    rel = game.relationships.get()
    states.transition(rel, "submit", users["rita"])
    first = services.review_queue(users["rita"])
    assert (first.total, len(first.rows), first.has_next) == (121, 100, True)
    second = services.review_queue(users["rita"], offset=first.next_offset)
    assert len(second.rows) == 21 and not second.has_next
    keys = [r.key for r in first.rows + second.rows]
    assert len(set(keys)) == 121 and keys[-1] == f"relationship:{rel.pk}"  # newest change last
    only = services.review_queue(users["rita"], item_type="question", offset=100)
    assert (only.total, len(only.rows)) == (120, 20)
    assert services.review_queue(users["anna"]).total == 0  # annotators review nothing
