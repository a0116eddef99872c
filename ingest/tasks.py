"""Background ingest job (django-tasks): runs the pipeline and reports progress into ``Job``."""
from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

from django.db import OperationalError
from django_tasks import task

from casebook.jobs import enqueue, lease, register_resumable
from casebook.models import Job

from .build import DuplicateIngest
from .pipeline import IngestOptions, run_ingest
from .read import IngestError

log = logging.getLogger(__name__)
STAGE_LABELS = {"read": "Reading files", "OCR": "OCR", "clean": "Cleaning text", "split": "Splitting",
                "images": "Image clues", "build": "Saving the game"}


def ocr_cache_dir(upload_dir: Path) -> Path:
    """Beside the upload (not inside: the upload folder is what gets ingested)."""
    return upload_dir.with_name(upload_dir.name + ".ocr")


def run_job(job_id: int) -> dict:
    """Run one ingest job to its end state under a lease.

    The upload folder and its OCR page cache are removed once the job is done or failed; when the
    worker dies they stay, so the interrupted job resumes at the first page not OCR'd yet.
    """
    with lease(job_id) as job:
        return _run_leased(job)


def _run_leased(job: Job) -> dict:
    job_id = job.pk
    upload_dir = Path(job.params["upload_dir"])
    if not upload_dir.is_dir():
        message = "The uploaded files are gone (removed after an earlier run); upload the package again."
        Job.objects.filter(pk=job_id).update(state=Job.State.FAILED, message=message)
        return {"error": message}
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

    try:
        options = IngestOptions(**job.params["options"], ocr_cache_dir=str(ocr_cache_dir(upload_dir)))
        summary = run_ingest([upload_dir], options, user=job.user, progress=progress)
    except (IngestError, DuplicateIngest) as exc:
        Job.objects.filter(pk=job_id).update(state=Job.State.FAILED, message=str(exc))
        return {"error": str(exc)}
    except Exception as exc:  # unexpected: keep the job readable, log the traceback for admins
        log.exception("ingest job %s failed", job_id)
        message = f"Internal error ({exc.__class__.__name__}: {exc}); nothing was saved."
        Job.objects.filter(pk=job_id).update(state=Job.State.FAILED, message=message)
        return {"error": message}
    finally:
        if Job.objects.filter(pk=job_id, state=Job.State.FAILED).exists():
            remove_upload(upload_dir)
    from annotate.models import Game

    game = Game.objects.filter(slug=summary.game_slug).first()
    Job.objects.filter(pk=job_id).update(
        state=Job.State.DONE, message="Done", result=summary.to_dict(), game=game,
        done=1, total=1,
    )
    remove_upload(upload_dir)
    return summary.to_dict()


def remove_upload(upload_dir: Path) -> None:
    shutil.rmtree(upload_dir, ignore_errors=True)
    shutil.rmtree(ocr_cache_dir(upload_dir), ignore_errors=True)


@task()
def ingest_job(job_id: int) -> dict:
    return run_job(job_id)


register_resumable("ingest", ingest_job)


def start_upload_job(user, files, options: IngestOptions) -> Job:
    """Save uploaded files to a private folder, record a Job and enqueue the ingest task."""
    import uuid
    from pathlib import PurePosixPath

    from django.conf import settings

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
        params={"upload_dir": str(upload_dir), "files": sorted(used), "options": {
            "title": options.title, "language": options.language, "characters": options.characters,
            "traditional": options.traditional, "replace": options.replace,
        }},
    )
    return enqueue(job, ingest_job)
