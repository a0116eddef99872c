"""Page batches of a fanned-out ingest, in one process against the real database (SQLite or PostgreSQL).

Claims are exclusive, a page's result is saved once (by the worker whose claim is current), an
expired lease is taken over, the build is claimed exactly once and reads the saved pages. The two
real worker processes are in ``test_fanout_workers``.
"""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from casebook.models import Job
from ingest import fanout, pages
from ingest.build import stored_pages
from ingest.models import IngestPlan, PageBatch, PageResult
from ingest.ocr import OcrResult
from ingest.pipeline import IngestOptions
from ingest.tasks import build, run_job, run_pages, start_upload_job, upload_dir_of

from .ingest_makers import first_chars, scanned_package

pytestmark = pytest.mark.django_db


@pytest.fixture
def data_dir(settings, tmp_path) -> Path:
    settings.DATA_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"
    return tmp_path


@pytest.fixture(scope="module")
def package(en_scripts) -> dict[str, bytes]:
    return scanned_package(en_scripts, 3, 2)


@pytest.fixture
def planned(data_dir, package, monkeypatch) -> tuple[Job, IngestPlan]:
    """An ingest of 3 characters × 2 scanned pages, planned into 3 batches of 2 pages (nothing OCR'd yet)."""
    monkeypatch.setattr(pages, "BATCH_PAGES", 2)
    files = package
    job = start_upload_job(None, [SimpleUploadedFile(n, b) for n, b in files.items()],
                           IngestOptions(title="Sin fanned out", language="en"))
    out = run_job(job.pk)  # the job's own task: plans and enqueues page tasks on the database queue
    assert out == {"batches": 3, "pages": 6}
    job.refresh_from_db()
    return job, IngestPlan.objects.get(job=job)


def fake_results(batch: PageBatch, worker: str) -> list[OcrResult]:
    return [OcrResult(f"Page {spec['index'] + 1} of {spec['name']} read by {worker}", 91.0, 9)
            for spec in batch.pages]


def test_the_job_plans_batches_in_the_shared_folder_and_enqueues_one_task_each(planned, data_dir):
    from django_tasks_db.models import DBTaskResult

    job, plan = planned
    assert job.state == "running" and job.message == "OCR" and (job.done, job.total) == (0, 6)
    batches = list(plan.batches.all())
    assert [len(b.pages) for b in batches] == [2, 2, 2] and {b.state for b in batches} == {"queued"}
    for batch in batches:
        for spec in batch.pages:
            assert not Path(spec["path"]).is_absolute()  # another machine mounts the data folder elsewhere
            assert (data_dir / spec["path"]).is_file() and len(spec["key"]) == 64
    assert (data_dir / plan.stage_dir).is_dir()
    assert DBTaskResult.objects.filter(task_path="ingest.tasks.ingest_pages", status="READY").count() == 3


def test_claims_are_exclusive_and_a_page_result_is_saved_once(planned):
    job, plan = planned
    first = pages.claim(plan, "host-a:1")
    second = pages.claim(plan, "host-b:2")
    assert first.number == 0 and second.number == 1  # b does not get a's batch while a's lease is live
    assert first.attempts == 1 and first.workers == ["host-a:1"]
    assert not pages.finish(first, "host-b:2", fake_results(first, "b"), 1.0)  # not b's claim: nothing saved
    assert PageResult.objects.filter(plan=plan).count() == 0
    assert pages.finish(first, "host-a:1", fake_results(first, "a"), 1.0)
    assert not pages.finish(first, "host-a:1", fake_results(first, "a"), 1.0)  # done already: not saved twice
    assert PageResult.objects.filter(plan=plan).count() == 2
    assert set(PageResult.objects.filter(plan=plan).values_list("worker", flat=True)) == {"host-a:1"}
    job.refresh_from_db()
    assert pages.progress(plan) == (2, 6)


def test_an_expired_lease_is_taken_over_and_the_late_worker_saves_nothing(planned):
    job, plan = planned
    lost = pages.claim(plan, "host-a:1")
    PageBatch.objects.filter(pk=lost.pk).update(lease_until=timezone.now() - timedelta(seconds=1))  # a stopped renewing
    assert [b.pk for b in pages.expired()] == [lost.pk]
    taken = pages.claim(plan, "host-b:2")
    assert taken.pk == lost.pk and taken.attempts == 2 and taken.workers == ["host-a:1", "host-b:2"]
    assert not pages.finish(lost, "host-a:1", fake_results(lost, "a"), 1.0)  # a comes back too late
    assert pages.finish(taken, "host-b:2", fake_results(taken, "b"), 1.0)
    assert list(PageResult.objects.filter(plan=plan).values_list("worker", flat=True)) == ["host-b:2"] * 2


def test_the_reaper_requeues_an_expired_batch_and_fails_the_job_after_too_many_lost_workers(planned, monkeypatch,
                                                                                             en_scripts):
    job, plan = planned
    enqueued: list[int] = []
    ended: list[int] = []
    lost = pages.claim(plan, "host-a:1")
    PageBatch.objects.filter(pk=lost.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert fanout.reap(enqueued.append, ended.append) == [lost.pk]
    assert enqueued == [job.pk] and PageBatch.objects.get(pk=lost.pk).state == "queued"
    assert fanout.reap(enqueued.append, ended.append) == []  # once: a second reaper finds nothing to do
    monkeypatch.setattr(pages, "MAX_ATTEMPTS", 2)
    again = pages.claim(plan, "host-b:2")
    assert again.pk == lost.pk and again.attempts == 2
    PageBatch.objects.filter(pk=lost.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    fanout.reap(enqueued.append, ended.append)
    job.refresh_from_db()
    assert job.state == "failed" and ended == [job.pk]
    assert job.message.startswith(f"OCR of page 1–2 of {sorted(list(en_scripts)[:3])[0]}.pdf stopped its worker 2 times")
    assert pages.claim(plan, "host-c:3") is None  # a failed job's batches are not taken


def test_the_build_is_claimed_once_and_reads_the_saved_pages(planned, en_scripts, data_dir):
    job, plan = planned
    assert not fanout.claim_build(plan, "host-a:1")  # batches left: nobody builds yet
    while (batch := pages.claim(plan, "host-a:1")) is not None:
        assert pages.finish(batch, "host-a:1", [
            OcrResult(first_chars(en_scripts[spec["name"].removesuffix(".pdf")], 500) if spec["index"] == 0
                      else f"saved page {spec['index'] + 1}", 90.0, 80) for spec in batch.pages], 1.0)
    assert fanout.claim_build(plan, "host-a:1")
    assert not fanout.claim_build(plan, "host-b:2")  # exactly once, whoever asks
    IngestPlan.objects.filter(pk=plan.pk).update(build="waiting", build_runs=0)  # as before the race
    result = run_pages(job.pk)  # a page task finding nothing to claim builds the game from the saved pages
    plan.refresh_from_db()
    job.refresh_from_db()
    assert job.state == "done", job.message
    assert plan.build == "done" and plan.build_runs == 1 and sorted(result["characters"]) == sorted(list(en_scripts)[:3])
    assert result["pages_by_method"] == {"ocr": 6}
    texts = [p.text for p in stored_pages(job.game)[0]]
    assert texts.count("saved page 2") == 3  # the build took the saved pages: it did not OCR them again
    assert PageResult.objects.filter(plan=plan).count() == 0  # cleaned up once the game holds them
    upload = upload_dir_of(job)
    assert upload == data_dir / job.params["upload"] and not upload.exists() and not fanout.stage_dir(upload).exists()
    assert fanout.build_once(plan, build) == {}  # a late page task does not build again


def test_an_interrupted_job_resumes_with_the_pages_not_read_yet(planned):
    from casebook.jobs import LEASE_SECONDS, reap_stale, resume

    job, plan = planned
    read = pages.claim(plan, "host-a:1")
    assert pages.finish(read, "host-a:1", fake_results(read, "a"), 1.0)
    pages.claim(plan, "host-a:1")  # then every worker died: nobody renews the job or this batch
    IngestPlan.objects.filter(pk=plan.pk).update(build="claimed")  # (as if a build had been lost too)
    stale = timezone.now() - timedelta(seconds=LEASE_SECONDS + 5)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=stale)
    PageBatch.objects.filter(plan=plan, state="running").update(lease_until=stale)
    assert reap_stale() == [job.pk]
    job.refresh_from_db()
    assert job.state == "interrupted" and pages.claim(plan, "host-b:2") is None  # nothing is taken meanwhile
    resume(job)
    assert run_job(job.pk) == {"batches": 2, "pages": 6}  # the worker runs the job's task again
    job.refresh_from_db()
    plan.refresh_from_db()
    assert job.state == "running" and (job.done, job.total) == (2, 6) and plan.build == "waiting"
    rows = list(plan.batches.values_list("number", "state", "attempts"))
    assert rows == [(0, "done", 1), (1, "running", 1), (2, "queued", 0)]  # the read pages are kept
    assert PageResult.objects.filter(plan=plan).count() == 2
    assert [pages.claim(plan, "host-b:2").number for _ in range(2)] == [1, 2]  # the lost batch first
