"""Fan-out of an ingest job over any number of workers: plan page batches, share them, build once.

1. The job's own task (:func:`start`) stages the package in the shared data folder, reads the text
   layers to learn which pages need OCR, cuts those into :class:`~ingest.models.PageBatch` rows and
   enqueues one page task per batch on the database queue.
2. Every worker that picks a page task (:func:`work`) claims batches one after another under a
   lease until none is free; each batch's results are saved once (:mod:`ingest.pages`).
3. Whichever worker finds every batch done claims the build with a conditional UPDATE (exactly
   one succeeds, however many race) and saves the game from the saved pages (:func:`build_once`).

A worker that dies leaves its batch ``running`` with a lease nobody renews; every live worker's
reaper (:func:`reap`) puts expired batches back on the queue, and keeps the job's heartbeat
alive while live workers have its batches to do. When no worker is left the job's heartbeat
expires and it is marked interrupted as before; resuming it continues with the batches not done.
"""
from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from django.db import DatabaseError, IntegrityError, OperationalError, transaction
from django.db.models import F
from django.utils import timezone

from casebook.jobs import worker_id
from casebook.models import Job

from . import ocr, pages
from .models import IngestPlan, PageBatch
from .pipeline import IngestOptions, duplicate_check
from .read import collect_sources, plan_reading

log = logging.getLogger(__name__)


def stage_dir(upload_dir: Path) -> Path:
    """Beside the upload, inside the shared data folder: page workers on any machine read from it."""
    return upload_dir.with_name(upload_dir.name + ".pages")


def make_plan(job: Job, upload_dir: Path, options: IngestOptions) -> IngestPlan:
    """Stage the package, refuse duplicates, and cut the pages needing OCR into batches.

    Raises IngestError / DuplicateIngest like the pipeline (nothing is saved). A package with
    nothing to OCR gets a plan without batches (the build reads it at once).
    """
    options.check()
    folder = stage_dir(upload_dir)
    shutil.rmtree(folder, ignore_errors=True)  # a coordinator that died half-way staged part of it
    folder.mkdir(parents=True)
    sources, problems = collect_sources([upload_dir], folder)
    page_jobs: list[ocr.PageJob] = []
    if sources:
        duplicate_check(options, job.user)(sources)
        with tempfile.TemporaryDirectory(prefix="casebook-plan-") as crops:
            reading = plan_reading(sources, ocr.ocr_language(options.language, options.traditional), problems,
                                   Path(crops), ocr_steps=options.ocr_steps, want_previews=False)
        page_jobs = reading.page_jobs()
    with transaction.atomic():
        plan = IngestPlan.objects.create(job=job, stage_dir=pages.data_path(folder), pages=len(page_jobs))
        store = pages.ResultStore(plan)
        names = {str(source.path): source.name for source in sources}
        pages.create_batches(plan, page_jobs, [store.key(j) for j in page_jobs], [names[j.path] for j in page_jobs])
    return plan


def reopen(plan: IngestPlan) -> IngestPlan:
    """A resumed job: a build whose worker was lost may be claimed again; batches stay as they are
    (done ones are kept, expired ones are claimable)."""
    IngestPlan.objects.filter(pk=plan.pk, build=IngestPlan.Build.CLAIMED).update(build=IngestPlan.Build.WAITING)
    plan.refresh_from_db()
    return plan


def start(job: Job, upload_dir: Path, options: IngestOptions, enqueue_pages: Callable[[int], object],
          build: Callable[[IngestPlan], dict]) -> dict:
    """The job's own task: plan (or reopen) its batches and enqueue one page task per batch left."""
    plan = IngestPlan.objects.filter(job=job).first()
    if plan is None:
        try:
            plan = make_plan(job, upload_dir, options)
        except IntegrityError:  # another coordinator of the same job planned it first
            plan = IngestPlan.objects.get(job=job)
    else:
        plan = reopen(plan)
    left = plan.batches.exclude(state=PageBatch.State.DONE).count()
    if not left:
        return build_once(plan, build)
    done, total = pages.progress(plan)
    Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).update(message="OCR", done=done, total=total)
    for _ in range(left):
        enqueue_pages(job.pk)
    return {"batches": left, "pages": plan.pages}


def work(job_id: int, build: Callable[[IngestPlan], dict]) -> dict:
    """A page task: claim and OCR batches of the job until none is free, then build if all are done.

    A batch that raises as a whole (not one page) fails the job with its message.
    """
    plan = IngestPlan.objects.filter(job_id=job_id).first()
    if plan is None:
        return {"batches": 0}
    me = worker_id()
    ran = 0
    while (batch := pages.claim(plan, me)) is not None:
        try:
            saved = pages.run(batch, me)
        except DatabaseError:  # not the batch's fault: its lease runs out and another worker retries it
            raise
        except Exception as exc:  # the batch as a whole: a bug or an unreadable staged file
            log.exception("ingest job %s: batch %s failed", job_id, batch.number)
            message = f"OCR of {pages.describe(batch)} failed ({exc.__class__.__name__}: {exc}); nothing was saved."
            Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(state=Job.State.FAILED, message=message)
            return {"error": message}
        ran += saved
        try:
            done, total = pages.progress(plan)
            Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(
                message="OCR", done=done, total=total, heartbeat_at=timezone.now())
        except OperationalError as exc:  # progress is best effort: a locked database must not stop the pages
            log.warning("ingest job %s: progress not saved (%s)", job_id, exc)
    return {"batches": ran, **build_once(plan, build)}


def claim_build(plan: IngestPlan, me: str) -> bool:
    """True for exactly one caller once every batch is done (conditional UPDATE on the plan)."""
    if plan.batches.exclude(state=PageBatch.State.DONE).exists():
        return False
    return bool(IngestPlan.objects.filter(pk=plan.pk, build=IngestPlan.Build.WAITING, job__state=Job.State.RUNNING)
                .update(build=IngestPlan.Build.CLAIMED, build_worker=me, build_runs=F("build_runs") + 1))


def build_once(plan: IngestPlan, build: Callable[[IngestPlan], dict]) -> dict:
    """Run ``build(plan)`` if every batch is done and no other worker has claimed the build."""
    if not claim_build(plan, worker_id()):
        return {}
    result = build(plan)
    IngestPlan.objects.filter(pk=plan.pk, build=IngestPlan.Build.CLAIMED).update(build=IngestPlan.Build.DONE)
    return result


def reap(enqueue_pages: Callable[[int], object], end: Callable[[int], object]) -> list[int]:
    """Run by every worker's reaper loop: requeue batches whose lease expired, keep waiting jobs alive.

    A batch that has lost its worker ``MAX_ATTEMPTS`` times fails its job (``end`` cleans up).
    Returns the ids of the batches put back on the queue (each with a fresh page task).
    """
    requeued = []
    for batch in pages.expired():
        if batch.attempts >= pages.MAX_ATTEMPTS:
            pages.give_up(batch)
            end(batch.plan.job_id)
            continue
        if PageBatch.objects.filter(pk=batch.pk, state=PageBatch.State.RUNNING, attempts=batch.attempts,
                                    lease_until__lt=timezone.now()).update(state=PageBatch.State.QUEUED, worker=""):
            log.warning("ingest job %s: %s lost its worker %s; queued again", batch.plan.job_id,
                        pages.describe(batch), batch.worker)
            enqueue_pages(batch.plan.job_id)
            requeued.append(batch.pk)
    waiting = set(PageBatch.objects.filter(
        plan__job__state=Job.State.RUNNING, plan__build=IngestPlan.Build.WAITING,
        state__in=[PageBatch.State.QUEUED, PageBatch.State.RUNNING]).values_list("plan__job_id", flat=True))
    if waiting:  # this worker is alive and will take them: the job is not dead, only waiting its turn
        Job.objects.filter(pk__in=waiting, state=Job.State.RUNNING).update(heartbeat_at=timezone.now())
    return requeued


def cleanup(plan: IngestPlan | None) -> None:
    """Once the job has ended: the page results were copied into the game (or are of no use)."""
    if plan is not None:
        plan.results.all().delete()
