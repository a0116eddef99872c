"""Background ingest (django-tasks): the job plans page batches, workers share them, one builds the game.

Progress goes into ``Job``; the fan-out itself is :mod:`ingest.fanout`."""
from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, OperationalError
from django_tasks import task

from casebook.jobs import enqueue, lease, register_reaper, register_resumable
from casebook.models import Job

from . import fanout, pages
from .build import DuplicateIngest
from .models import IngestPlan
from .pipeline import IngestOptions, run_ingest
from .read import IngestError

log = logging.getLogger(__name__)
STAGE_LABELS = {"read": "Reading files", "OCR": "OCR", "clean": "Cleaning text", "split": "Splitting",
                "images": "Image clues", "build": "Saving the game"}


def upload_dir_of(job: Job) -> Path:
    """The job's upload folder on this machine: stored relative to the data folder, which each
    machine may mount elsewhere (jobs queued before that kept only the absolute path)."""
    if "upload" in job.params:
        return Path(settings.DATA_DIR) / job.params["upload"]
    return Path(job.params["upload_dir"])


def run_job(job_id: int) -> dict:
    """The job's own task: plan its page batches under the job's lease and enqueue them (see ``fanout``).

    The upload folder, its staged copy and the saved page results are removed once the job is done
    or failed; when workers die they stay, so the interrupted job resumes with the pages not read yet.
    """
    with lease(job_id) as job:
        upload_dir = upload_dir_of(job)
        if not upload_dir.is_dir():
            message = "The uploaded files are gone (removed after an earlier run); upload the package again."
            Job.objects.filter(pk=job_id).update(state=Job.State.FAILED, message=message)
            return {"error": message}
        return _failing_cleanly(job_id, upload_dir, lambda: fanout.start(
            job, upload_dir, IngestOptions(**job.params["options"]), enqueue_pages, build))


def run_pages(job_id: int) -> dict:
    """A page task: any worker, on any machine sharing the database and the data folder."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None or job.state != Job.State.RUNNING:
        return {"skipped": f"job {job_id} is not running"}
    upload_dir = upload_dir_of(job)
    try:
        result = _failing_cleanly(job_id, upload_dir, lambda: fanout.work(job_id, build), keep=(DatabaseError,))
    except DatabaseError as exc:  # e.g. a lock held past the busy timeout: the job goes on without this task
        log.warning("ingest job %s: page task stopped by a database error (%s); its batch is retried once "
                    "its lease expires", job_id, exc)
        return {"error": str(exc)}
    if Job.objects.filter(pk=job_id, state=Job.State.FAILED).exists():  # a batch failed it
        _end(job_id, upload_dir)
    return result


def end_failed(job_id: int) -> None:
    """Clean up after a job the reaper failed (its upload, staged files and page results)."""
    job = Job.objects.filter(pk=job_id, state=Job.State.FAILED).first()
    if job is not None:
        _end(job_id, upload_dir_of(job))


def build(plan: IngestPlan) -> dict:
    """The build stage (run once per job, by the worker that claimed it): the whole pipeline, with
    every fanned-out page taken from the saved results, then the game saved."""
    job_id = plan.job_id
    with lease(job_id, "Saving the game") as job:
        upload_dir = upload_dir_of(job)
        last = 0.0

        def progress(stage: str, done: int, total: int) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last < 0.5 and done < total:  # at most two writes a second
                return
            last = now
            try:
                Job.objects.filter(pk=job_id).update(message=STAGE_LABELS.get(stage, stage), done=done, total=total)
            except OperationalError as exc:  # progress is best effort: a locked database must not stop the job
                log.warning("ingest job %s: progress not saved (%s)", job_id, exc)

        def run() -> dict:
            options = IngestOptions(**job.params["options"], ocr_cache=pages.ResultStore(plan))
            summary = run_ingest([upload_dir], options, user=job.user, progress=progress)
            from annotate.models import Game

            game = Game.objects.filter(slug=summary.game_slug).first()
            Job.objects.filter(pk=job_id).update(
                state=Job.State.DONE, message="Done", result=summary.to_dict(), game=game, done=1, total=1,
            )
            _end(job_id, upload_dir)
            return summary.to_dict()

        return _failing_cleanly(job_id, upload_dir, run)


def _failing_cleanly(job_id: int, upload_dir: Path, step, keep: tuple[type[Exception], ...] = ()) -> dict:
    """Run a stage; a bad package or an unexpected error fails the job with a readable message
    (errors of the ``keep`` types propagate instead)."""
    try:
        return step()
    except keep:
        raise
    except (IngestError, DuplicateIngest) as exc:
        message = str(exc)
    except Exception as exc:  # unexpected: keep the job readable, log the traceback for admins
        log.exception("ingest job %s failed", job_id)
        message = f"Internal error ({exc.__class__.__name__}: {exc}); nothing was saved."
    Job.objects.filter(pk=job_id).exclude(state=Job.State.DONE).update(state=Job.State.FAILED, message=message)
    _end(job_id, upload_dir)
    return {"error": message}


def _end(job_id: int, upload_dir: Path) -> None:
    fanout.cleanup(IngestPlan.objects.filter(job_id=job_id).first())
    remove_upload(upload_dir)


def remove_upload(upload_dir: Path) -> None:
    shutil.rmtree(upload_dir, ignore_errors=True)
    shutil.rmtree(fanout.stage_dir(upload_dir), ignore_errors=True)


@task()
def ingest_job(job_id: int) -> dict:
    return run_job(job_id)


@task()
def ingest_pages(job_id: int) -> dict:
    return run_pages(job_id)


def enqueue_pages(job_id: int) -> None:
    ingest_pages.enqueue(job_id)


register_resumable("ingest", ingest_job)
register_reaper(lambda: fanout.reap(enqueue_pages, end_failed))


def start_upload_job(user, files, options: IngestOptions) -> Job:
    """Save uploaded files to a private folder, record a Job and enqueue the ingest task."""
    import uuid
    from pathlib import PurePosixPath

    upload_dir = Path(settings.DATA_DIR) / "ingest-uploads" / uuid.uuid4().hex
    upload_dir.mkdir(parents=True)
    used: set[str] = set()
    for f in files:
        name = PurePosixPath(f.name.replace("\\", "/")).name  # no folders: nothing escapes upload_dir
        stem, n = name, 2
        while name in used:
            name = f"{PurePosixPath(stem).stem}-{n}{PurePosixPath(stem).suffix}"
            n += 1
        used.add(name)
        with open(upload_dir / name, "wb") as out:
            for chunk in f.chunks():
                out.write(chunk)
    job = Job.objects.create(
        kind="ingest", user=user, state=Job.State.QUEUED, message="Queued",
        params={"upload_dir": str(upload_dir), "upload": upload_dir.relative_to(settings.DATA_DIR).as_posix(),
                "files": sorted(used), "options": {
            "title": options.title, "language": options.language, "characters": options.characters,
            "traditional": options.traditional, "replace": options.replace,
        }},
    )
    return enqueue(job, ingest_job)
