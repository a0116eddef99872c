"""Page batches of a fanned-out ingest: claim one under a lease, OCR it, save its results once.

Why a claim is safe with any number of workers on any number of machines: a batch is claimed by a
conditional UPDATE that matches its state *and* its attempt count, so of two workers racing for
one batch exactly one row update succeeds; results are saved in the same transaction as the
UPDATE that marks the batch done, and only while the claim is still this worker's (same worker,
same attempt), so a worker that lost its lease throws its results away instead of saving a page
twice. A worker that dies stops renewing ``lease_until``; the batch is claimable again once it
has expired (:func:`expired` is run by every worker's reaper loop).
"""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from casebook.jobs import LEASE_SECONDS, renewing, worker_id
from casebook.models import Job

from . import ocr
from .models import IngestPlan, PageBatch, PageResult

log = logging.getLogger(__name__)

MAX_ATTEMPTS = int(os.environ.get("CASEBOOK_INGEST_PAGE_ATTEMPTS", "3"))  # claims before a batch fails the job
BATCH_PAGES = int(os.environ.get("CASEBOOK_INGEST_BATCH_PAGES", str(ocr.MAX_BATCH)))


# -- page descriptions (stored as JSON, read on any machine) ---------------------------------------


def data_path(path: str | Path) -> str:
    """``path`` relative to the data folder: each machine mounts the shared folder where it likes."""
    return Path(path).resolve().relative_to(Path(settings.DATA_DIR).resolve()).as_posix()


def spec_of(job: ocr.PageJob, key: str, name: str) -> dict:
    """``name`` is the file's name in the package (the staged copy's is a number)."""
    return {"path": data_path(job.path), "name": name, "index": job.page_index, "lang": job.lang,
            "steps": list(job.steps), "dpi": job.dpi, "max_pixels": job.max_pixels, "key": key}


def job_of(spec: dict) -> ocr.PageJob:
    return ocr.PageJob(str(Path(settings.DATA_DIR) / spec["path"]), spec["index"], spec["lang"], tuple(spec["steps"]),
                       spec["dpi"], spec["max_pixels"])


def describe(batch: PageBatch) -> str:
    """“page 3–6 of scan.pdf”, for messages."""
    names = sorted({spec["name"] for spec in batch.pages})
    numbers = [spec["index"] + 1 for spec in batch.pages if spec["index"] >= 0]
    where = f"page {min(numbers)}–{max(numbers)} of " if len(numbers) > 1 else f"page {numbers[0]} of " if numbers else ""
    return f"{where}{', '.join(names)}"


def create_batches(plan: IngestPlan, jobs: Sequence[ocr.PageJob], keys: Sequence[str], names: Sequence[str],
                   size: int | None = None) -> list[PageBatch]:
    """Cut the pages into batches of one language (``ocr.plan_batches``), in page order."""
    groups = ocr.plan_batches(jobs, workers=1, max_batch=max(1, size or BATCH_PAGES))
    batches = [PageBatch(plan=plan, number=n, pages=[spec_of(jobs[i], keys[i], names[i]) for i in group])
               for n, group in enumerate(groups)]
    return PageBatch.objects.bulk_create(batches)


# -- results ---------------------------------------------------------------------------------------


class ResultStore(ocr.PageCache):
    """A plan's saved page results behind the OCR page-cache interface, for the build stage.

    A page whose OCR failed comes back as its exception, so the build reports it as the
    pipeline always has ("OCR failed: …; page left empty") instead of reading it again.
    """

    def __init__(self, plan: IngestPlan) -> None:  # no folder: the database is the cache
        self.plan = plan
        self._file_hashes: dict[str, str] = {}

    def get(self, job: ocr.PageJob) -> ocr.OcrResult | Exception | None:  # type: ignore[override]
        row = PageResult.objects.filter(plan=self.plan, key=self.key(job)).first()
        return None if row is None else result_of(row)

    def put(self, job: ocr.PageJob, result: ocr.OcrResult) -> None:
        """Pages the build read itself (images cropped from text pages): kept for a resumed build."""
        try:
            with transaction.atomic():
                PageResult.objects.create(plan=self.plan, key=self.key(job), worker=worker_id(), **fields_of(result))
        except IntegrityError:  # already saved: the first result stands
            pass


def fields_of(result: ocr.OcrResult | Exception) -> dict:
    if isinstance(result, Exception):
        return {"error": str(result) or result.__class__.__name__}
    return {"text": result.text, "confidence": result.confidence, "words": result.words,
            "text_area": result.text_area, "angle": result.angle, "preview": result.preview}


def result_of(row: PageResult) -> ocr.OcrResult | Exception:
    if row.error:
        return RuntimeError(row.error)
    return ocr.OcrResult(row.text, row.confidence, row.words, row.text_area, row.angle, bytes(row.preview or b""))


# -- claims ----------------------------------------------------------------------------------------


def lease_end() -> timezone.datetime:
    return timezone.now() + timedelta(seconds=LEASE_SECONDS)


def claim(plan: IngestPlan, me: str) -> PageBatch | None:
    """The next batch nobody holds (queued, or its lease expired), now held by ``me``; None when none is left.

    Only while the job runs: an interrupted or failed job's batches are not taken.
    """
    while Job.objects.filter(pk=plan.job_id, state=Job.State.RUNNING).exists():
        now = timezone.now()
        free = (PageBatch.objects.filter(plan=plan)
                .filter(Q(state=PageBatch.State.QUEUED) | Q(state=PageBatch.State.RUNNING, lease_until__lt=now))
                .order_by("number").values_list("pk", "state", "attempts").first())
        if free is None:
            return None
        pk, state, attempts = free
        if attempts >= MAX_ATTEMPTS:
            give_up(PageBatch.objects.get(pk=pk))
            return None
        with transaction.atomic():
            won = PageBatch.objects.filter(pk=pk, state=state, attempts=attempts).update(
                state=PageBatch.State.RUNNING, worker=me, lease_until=lease_end(), attempts=F("attempts") + 1)
            if won:
                batch = PageBatch.objects.get(pk=pk)
                batch.workers = [*batch.workers, me]
                batch.save(update_fields=["workers"])
                return batch
        # another worker took it between our read and our update: look again
    return None


def give_up(batch: PageBatch) -> None:
    """A batch that stopped its worker MAX_ATTEMPTS times fails the job (the page kills workers)."""
    message = (f"OCR of {describe(batch)} stopped its worker {batch.attempts} times (killed or out of memory); "
               "the job failed. Remove or replace that page and upload the package again.")
    if Job.objects.filter(pk=batch.plan.job_id, state=Job.State.RUNNING).update(state=Job.State.FAILED, message=message):
        log.error("ingest job %s: %s", batch.plan.job_id, message)


def still_mine(batch: PageBatch, me: str):
    return PageBatch.objects.filter(pk=batch.pk, state=PageBatch.State.RUNNING, worker=me, attempts=batch.attempts)


def run(batch: PageBatch, me: str) -> bool:
    """OCR the batch while renewing its lease (and the job's heartbeat); save the results if still ours.

    Returns whether this run's results were saved. A batch-wide exception propagates (the caller
    fails the job with it); a failing page is saved as that page's error.
    """
    job_id = batch.plan.job_id

    def renew() -> None:
        still_mine(batch, me).update(lease_until=lease_end())
        Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(heartbeat_at=timezone.now())

    started = time.monotonic()
    with renewing(f"ingest-batch-{batch.pk}-lease", renew):
        results = ocr.run_batch([job_of(spec) for spec in batch.pages])
    return finish(batch, me, results, time.monotonic() - started)


def finish(batch: PageBatch, me: str, results: Sequence[ocr.OcrResult | Exception], seconds: float) -> bool:
    """Mark the batch done and save its pages' results, in one transaction, only if the claim is still ours."""
    with transaction.atomic():
        if not still_mine(batch, me).update(state=PageBatch.State.DONE, lease_until=None, seconds=round(seconds, 3),
                                            finished_at=timezone.now()):
            log.warning("ingest batch %s (%s): the lease was lost to another worker; results dropped",
                        batch.number, describe(batch))
            return False
        PageResult.objects.bulk_create([
            PageResult(plan_id=batch.plan_id, batch=batch, key=spec["key"], worker=me, **fields_of(result))
            for spec, result in zip(batch.pages, results, strict=True)
        ], ignore_conflicts=True)  # a page already saved (the same page twice in a package): the first stands
    return True


def progress(plan: IngestPlan) -> tuple[int, int]:
    """(pages done, pages) over the plan's batches."""
    done = sum(len(pages) for pages in plan.batches.filter(state=PageBatch.State.DONE).values_list("pages", flat=True))
    return done, plan.pages


def expired(now=None) -> list[PageBatch]:
    """Running batches of running jobs whose lease has expired (their worker was lost)."""
    now = now or timezone.now()
    return list(PageBatch.objects.select_related("plan").filter(
        state=PageBatch.State.RUNNING, lease_until__lt=now, plan__job__state=Job.State.RUNNING))
