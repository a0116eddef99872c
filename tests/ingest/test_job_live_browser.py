"""In real headless Chromium: "Recent jobs" rows and the job page follow the job's real state without a reload,
and a job whose worker died shows as interrupted with a Resume button."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate import models as m
from casebook import jobs as job_leases
from casebook.models import Job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-12345678"


def _job(user, state: str, **fields) -> Job:
    return Job.objects.create(kind="ingest", user=user, state=state, message=state,
                                params={"upload_dir": "/nonexistent", "files": ["a.pdf"],
                                        "options": {"title": f"包 {state}", "language": "zh"}}, **fields)


def test_recent_rows_and_job_page_follow_the_real_state(page, live_server, django_user_model):
    user = django_user_model.objects.create_user("lin", password=PASSWORD)
    other = m.Game.objects.create(slug="other", title="Other", language="en")
    m.Membership.objects.create(user=user, game=other, role="manager")  # ingest is for managers
    queued = _job(user, "queued")
    running = _job(user, "running", done=2, total=5, worker="gone:1", heartbeat_at=timezone.now())

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "lin")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/ingest/")
    queued_row = page.locator(f'[data-job-live$="/jobs/{queued.pk}.json"]')
    running_row = page.locator(f'[data-job-live$="/jobs/{running.pk}.json"]')
    assert queued_row.locator('[data-job-field="state"]').inner_text() == "queued"

    Job.objects.filter(pk=queued.pk).update(state="done", done=1, total=1, message="Done")
    queued_row.locator('[data-job-field="state"]', has_text="done").wait_for()

    stale = timezone.now() - timedelta(seconds=job_leases.LEASE_SECONDS + 30)  # its worker died
    Job.objects.filter(pk=running.pk).update(heartbeat_at=stale)
    running_row.locator('[data-job-field="state"]', has_text="interrupted").wait_for()
    assert running_row.locator("[data-job-resume]").is_visible()
    assert Job.objects.get(pk=running.pk).state == "interrupted"

    page.goto(f"{live_server.url}/ingest/jobs/{running.pk}/")
    assert page.locator("#job-state").inner_text() == "interrupted"
    assert "after 2 of 5" in page.locator("#job-message").inner_text()
    assert page.locator('[data-job-field="hint"]').is_hidden()  # no "is a worker running?" once it has run
    page.click("[data-job-resume] button")
    page.locator(".msg.success").wait_for()
    assert Job.objects.get(pk=running.pk).state in {"queued", "running", "failed"}  # queued again (files gone: failed)
