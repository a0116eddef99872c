"""Synthesis as a background job (django-tasks) with per-stage progress on the ``Job`` row."""
from __future__ import annotations

import logging
import time
from dataclasses import asdict
from typing import Any

from django_tasks import task

from casebook.jobs import lease
from casebook.models import Job

from .models import SynthesisRun
from .pipeline import SynthesisSettings, rerun_stage, run_synthesis

log = logging.getLogger(__name__)
JOB_KIND = "synthesis"


def start_synthesis_job(options: SynthesisSettings, *, user: Any = None) -> Job:
    options.validate()
    job = Job.objects.create(kind=JOB_KIND, user=user if getattr(user, "is_authenticated", False) else None,
                             params={"options": asdict(options)}, message="Queued")
    synthesis_task.enqueue(job.pk)
    job.refresh_from_db()
    return job


def start_rerun_job(run: Any, stage: str, *, user: Any = None) -> Job:
    """Re-run one stage of ``run`` in the background (see :func:`synthesis.pipeline.rerun_stage`)."""
    job = Job.objects.create(kind=JOB_KIND, game=run.game, user=user if getattr(user, "is_authenticated", False) else None,
                             params={"rerun": stage, "run": run.pk}, message="Queued")
    synthesis_task.enqueue(job.pk)
    job.refresh_from_db()
    return job


@task()
def synthesis_task(job_id: int) -> dict[str, Any]:
    with lease(job_id):  # a job whose worker dies is marked interrupted (casebook.jobs)
        return run_job(job_id)


def run_job(job_id: int, client: Any = None) -> dict[str, Any]:
    """Run one queued synthesis job to its end state; never raises (the job row says what happened)."""
    job = Job.objects.select_related("user").get(pk=job_id)
    Job.objects.filter(pk=job_id).update(state=Job.State.RUNNING, message="Starting")
    last = 0.0

    def progress(label: str, done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= 0.5 or done >= total:
            last = now
            Job.objects.filter(pk=job_id).update(message=label, done=done, total=max(total, done))

    try:
        if job.params.get("rerun"):
            run = rerun_stage(SynthesisRun.objects.get(pk=job.params["run"]), job.params["rerun"], user=job.user,
                              client=client, progress=progress)
        else:
            run = run_synthesis(SynthesisSettings(**job.params["options"]), user=job.user, job=job, client=client,
                                progress=progress)
    except Exception as exc:  # noqa: BLE001 - a job ends with a readable state, not a traceback
        log.exception("synthesis job %s failed", job_id)
        message = str(exc) if exc.__class__.__name__ in {"LLMError", "ValueError"} else \
            f"Internal error ({exc.__class__.__name__}: {exc}); no game was written."
        Job.objects.filter(pk=job_id).update(state=Job.State.FAILED, message=message)
        return {"error": message}
    result = {"run": run.pk, "state": run.state, "usage": run.usage, "checks": len(run.checks),
              "failure": run.failure}
    if run.state == run.State.DONE and not run.failure:
        Job.objects.filter(pk=job_id).update(state=Job.State.DONE, game=run.game, result=result,
                                             message=f"Draft game written: {run.game.title}")
    else:
        Job.objects.filter(pk=job_id).update(state=Job.State.FAILED, result=result,
                                             message=f"Stage {run.failure.get('stage')} failed: {run.failure.get('message')}"
                                                     " — no game was written")
    return result
