"""Push and pull as background jobs: an ``casebook.models.Job`` row carries state and progress.

:func:`start_job` records the job and enqueues :data:`labelstudio_task` (a ``db_worker`` runs it;
tests use the immediate backend). The token waits in ``Job.params`` only encrypted
(``casebook.security.seal``) and is wiped when the job starts, so it never sits there in plain text.
"""
from __future__ import annotations

import logging
from typing import Any

from django_tasks import task

from annotate.models import Game
from casebook.jobs import enqueue, lease
from casebook.models import Job
from casebook.security import seal, unseal

from . import config, service
from .client import LabelStudioError

log = logging.getLogger(__name__)

JOB_KINDS = {"push": "labelstudio-push", "pull": "labelstudio-pull"}


def create_job(game: Game, action: str, *, url: str, token: str, kinds: list[str] | str | None = None, user=None,
               keep_deleted: bool = False) -> Job:
    """The job row (state queued), not yet enqueued. Raises ValueError on a bad action or kinds."""
    if action not in JOB_KINDS:
        raise ValueError(f"unknown action {action!r}: use push or pull")
    params: dict[str, Any] = {"action": action, "url": url.strip(), "sealed_token": seal(token.strip())}
    if action == "push":
        params["kinds"] = config.normalise_kinds(kinds)
    else:
        params["keep_deleted"] = bool(keep_deleted)
    return Job.objects.create(kind=JOB_KINDS[action], game=game, params=params, message="queued",
                              user=user if getattr(user, "is_authenticated", False) else None)


def start_job(game: Game, action: str, *, url: str, token: str, kinds=None, user=None, keep_deleted: bool = False) -> Job:
    job = create_job(game, action, url=url, token=token, kinds=kinds, user=user, keep_deleted=keep_deleted)
    return enqueue(job, labelstudio_task)


@task()
def labelstudio_task(job_id: int) -> dict[str, Any]:
    """The queued entry point (arguments must be JSON: just the job id), run under the job's lease."""
    with lease(job_id):
        return run_job(job_id)


def run_job(job_id: int) -> dict[str, Any]:
    """Run a queued push/pull to the end; never raises (the job row carries any failure)."""
    job = Job.objects.select_related("game", "user").get(pk=job_id)
    params = dict(job.params)
    sealed = params.pop("sealed_token", "")
    Job.objects.filter(pk=job.pk).update(state=Job.State.RUNNING, message="connecting to Label Studio", params=params)
    try:
        token = unseal(sealed)
    except ValueError as exc:
        Job.objects.filter(pk=job.pk).update(state=Job.State.FAILED, message=str(exc), result={"error": str(exc)})
        return {"error": str(exc)}

    def progress(done: int, total: int, message: str) -> None:
        Job.objects.filter(pk=job.pk).update(done=done, total=total, message=message[:500])

    try:
        if params["action"] == "push":
            report = service.push(job.game, params["url"], token, kinds=params.get("kinds"), progress=progress)
        else:
            report = service.pull(job.game, params["url"], token, user=job.user, progress=progress,
                                  keep_deleted=params.get("keep_deleted", False))
    except LabelStudioError as exc:
        message = str(exc) + (" Nothing was changed in Casebook." if params["action"] == "pull"
                              and "Nothing was changed" not in str(exc) else "")
        Job.objects.filter(pk=job.pk).update(state=Job.State.FAILED, message=message, result={"error": message})
        return {"error": message}
    except Exception as exc:  # noqa: BLE001 - a job ends with a state and a message, not a traceback
        log.exception("Label Studio job %s crashed", job.pk)
        message = f"stopped by an unexpected error: {exc}" + (" Nothing was changed in Casebook." if params["action"] == "pull" else "")
        Job.objects.filter(pk=job.pk).update(state=Job.State.FAILED, message=message, result={"error": message})
        return {"error": message}
    result = report.as_dict()
    Job.objects.filter(pk=job.pk).update(state=Job.State.DONE, message=report.summary()[:500], result=result)
    return result
