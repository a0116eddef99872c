"""Job leases: a job whose worker died is marked interrupted and resumed from the page and the command line."""
from __future__ import annotations

import io
import threading
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotate.models import Membership
from casebook import jobs as job_leases
from casebook.models import Job
from generation.jobs import create_distractor_job, run_distractor_job

from .conftest import bare_copy


def _questions(game, count: int):
    return [bare_copy(q) for q in game.questions.filter(kind__in=["objective", "reasoning"]).order_by("position")[:count]]


def _died_half_way(game, user, questions) -> Job:
    """A job that wrote the first half of its questions, then lost its worker two minutes ago."""
    job = create_distractor_job(game, [q.pk for q in questions], n=3, mode="offline", user=user)
    half = questions[: len(questions) // 2]
    partial = create_distractor_job(game, [q.pk for q in half], n=3, mode="offline", user=user)
    run_distractor_job(partial.pk)  # what the dead worker had saved
    stale = timezone.now() - timedelta(seconds=job_leases.LEASE_SECONDS + 60)
    Job.objects.filter(pk=job.pk).update(state=Job.State.RUNNING, done=len(half), message="running",
                                         worker="elsewhere:1", heartbeat_at=stale)
    job.refresh_from_db()
    return job


def test_expired_lease_is_interrupted_with_progress_fresh_one_is_not(sin_zh, no_llm, django_user_model):
    user = django_user_model.objects.create_user("owner")
    questions = _questions(sin_zh, 4)
    dead = _died_half_way(sin_zh, user, questions)
    alive = create_distractor_job(sin_zh, [questions[0].pk], mode="offline", user=user)
    Job.objects.filter(pk=alive.pk).update(state=Job.State.RUNNING, heartbeat_at=timezone.now())

    assert job_leases.reap_stale() == [dead.pk]
    dead.refresh_from_db()
    assert dead.state == Job.State.INTERRUPTED and dead.resumable and dead.finished
    assert "after 2 of 4 step(s)" in dead.message
    assert Job.objects.get(pk=alive.pk).state == Job.State.RUNNING


def test_status_poll_notices_a_dead_worker(sin_zh, no_llm, client, member):
    owner = member(sin_zh, Membership.Role.ANNOTATOR, "ann")
    job = _died_half_way(sin_zh, owner, _questions(sin_zh, 2))
    client.force_login(owner)
    data = client.get(reverse("annotate:job_json", args=[job.pk])).json()
    assert data["state"] == "interrupted" and data["resumable"] and data["finished"]
    page = client.get(reverse("generation:job", args=[sin_zh.slug, job.pk])).content.decode()
    assert reverse("annotate:job_resume", args=[job.pk]) in page


def test_resume_from_the_page_skips_finished_questions(sin_zh, no_llm, immediate_tasks, client, member):
    owner = member(sin_zh, Membership.Role.ANNOTATOR, "ann")
    other = member(sin_zh, Membership.Role.ANNOTATOR, "bob")
    questions = _questions(sin_zh, 4)
    job = _died_half_way(sin_zh, owner, questions)
    job_leases.reap_stale()
    url = reverse("annotate:job_resume", args=[job.pk])

    client.force_login(other)  # another annotator may see it but not resume it
    refused = client.post(url, HTTP_ACCEPT="application/json")
    assert refused.status_code == 403 and Job.objects.get(pk=job.pk).state == Job.State.INTERRUPTED

    client.force_login(owner)
    resumed = client.post(url, {"next": reverse("generation:job", args=[sin_zh.slug, job.pk])})
    assert resumed.status_code == 302 and resumed["Location"].endswith(f"/jobs/{job.pk}/")
    job.refresh_from_db()
    assert job.state == Job.State.DONE and job.task_id
    assert job.message == "2 question(s) got distractors, 2 needed none, 0 failed"
    assert all(q.options.count() == 4 for q in questions)  # nothing written twice

    again = client.post(url, HTTP_ACCEPT="application/json")
    assert again.status_code == 409 and "not interrupted" in again.json()["error"]


def test_resume_from_the_command_line(sin_zh, no_llm, immediate_tasks, member):
    owner = member(sin_zh, Membership.Role.ANNOTATOR, "ann")
    member(sin_zh, Membership.Role.ANNOTATOR, "bob")
    job = _died_half_way(sin_zh, owner, _questions(sin_zh, 2))
    out = io.StringIO()
    call_command("jobs", stdout=out)
    assert f"job {job.pk}: its worker stopped; marked interrupted" in out.getvalue()
    with pytest.raises(CommandError, match="bob may not resume"):
        call_command("jobs", "--resume", str(job.pk), "--as", "bob")
    with pytest.raises(CommandError, match="there is no job"):
        call_command("jobs", "--resume", "999999", "--as", "ann")
    call_command("jobs", "--resume", str(job.pk), "--as", "ann", stdout=out)
    assert Job.objects.get(pk=job.pk).state == Job.State.DONE


def test_lease_heartbeat_keeps_a_slow_job_alive_and_a_crash_interrupts(transactional_db, monkeypatch):
    """The heartbeat thread has its own connection, so this test commits for real."""
    monkeypatch.setattr(job_leases, "HEARTBEAT_SECONDS", 0.05)
    job = Job.objects.create(kind="test", state=Job.State.QUEUED, total=3)
    with job_leases.lease(job.pk):
        first = Job.objects.get(pk=job.pk).heartbeat_at
        threading.Event().wait(0.3)
        later = Job.objects.get(pk=job.pk)
        assert later.state == Job.State.RUNNING and later.heartbeat_at > first
    with pytest.raises(KeyboardInterrupt), job_leases.lease(job.pk):
        raise KeyboardInterrupt  # what the worker's second Ctrl-C / SIGTERM does mid-job
    assert Job.objects.get(pk=job.pk).state == Job.State.INTERRUPTED
