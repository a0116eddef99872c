"""Job leases: a running job proves it is alive; one whose worker died is marked interrupted.

Generic over job kinds (ingest, distractors, Label Studio sync, later page-level ingest tasks):

- :func:`lease` wraps a job's run: it marks the job running under this process's worker id and
  renews ``heartbeat_at`` from a background thread every :data:`HEARTBEAT_SECONDS`, so a long
  OCR page or LLM call never looks dead.
- :func:`reap_stale` marks running jobs whose heartbeat is older than :data:`LEASE_SECONDS`
  *interrupted*, saying how far they got (the worker loop calls it, and so does every status poll).
- :func:`resume` puts an interrupted job back on the queue; each feature registers the task that
  runs its kind with :func:`register_resumable` (a feature resumes from what it already saved).
- :func:`register_reaper` adds a feature's own clean-up of expired leases (ingest page batches)
  to what every worker's reaper loop runs; :func:`renewing` heartbeats any lease of a feature's.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.db import OperationalError, close_old_connections, connection
from django.utils import timezone

from casebook.models import Job

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = float(os.environ.get("CASEBOOK_JOB_HEARTBEAT", "10"))
LEASE_SECONDS = float(os.environ.get("CASEBOOK_JOB_LEASE", "45"))  # a dead worker is noticed within a minute

_RESUMABLE: dict[str, Callable[[int], Any]] = {}
_REAPERS: list[Callable[[], Any]] = []


class JobError(Exception):
    """A job cannot be resumed (wrong state, unknown kind); the message is for the user."""


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def register_resumable(kind: str, task: Any) -> None:
    """``task`` is a django-tasks task taking the job id; :func:`resume` enqueues it."""
    _RESUMABLE[kind] = task


def register_reaper(reaper: Callable[[], Any]) -> None:
    """``reaper()`` runs in every worker's reaper loop (before :func:`reap_stale`)."""
    if reaper not in _REAPERS:
        _REAPERS.append(reaper)


def enqueue(job: Job, task: Any) -> Job:
    """Enqueue ``task(job.pk)`` and remember the task result id (reaping also ends that row)."""
    result = task.enqueue(job.pk)
    Job.objects.filter(pk=job.pk).update(task_id=str(result.id))
    job.refresh_from_db()
    return job


class _Heartbeat(threading.Thread):
    def __init__(self, name: str, renew: Callable[[], Any]) -> None:
        super().__init__(name=name, daemon=True)
        self.renew, self.stop = renew, threading.Event()

    def run(self) -> None:
        try:
            while not self.stop.wait(HEARTBEAT_SECONDS):
                try:
                    self.renew()
                except OperationalError as exc:  # a locked database: try again at the next beat
                    log.warning("%s skipped: %s", self.name, exc)
        finally:
            connection.close()  # this thread's own connection


@contextmanager
def renewing(name: str, renew: Callable[[], Any]) -> Iterator[None]:
    """Call ``renew()`` every :data:`HEARTBEAT_SECONDS` from a background thread while the block runs."""
    beat = _Heartbeat(name, renew)
    beat.start()
    try:
        yield
    finally:
        beat.stop.set()
        beat.join()


@contextmanager
def lease(job_id: int, message: str = "Starting") -> Iterator[Job]:
    """Hold the job's lease while the block runs (marked running, heartbeat renewed)."""
    me = worker_id()
    Job.objects.filter(pk=job_id).update(state=Job.State.RUNNING, worker=me, heartbeat_at=timezone.now(),
                                         message=message)
    beat = _Heartbeat(f"job-{job_id}-heartbeat",
                      lambda: Job.objects.filter(pk=job_id, worker=me).update(heartbeat_at=timezone.now()))
    beat.start()
    try:
        yield Job.objects.get(pk=job_id)
    except BaseException as exc:  # SIGTERM/SystemExit or a crash the feature did not turn into "failed"
        job = Job.objects.filter(pk=job_id, state=Job.State.RUNNING, worker=me).first()
        if job is not None:
            reason = f" ({exc.__class__.__name__})" if not isinstance(exc, SystemExit | KeyboardInterrupt) else ""
            Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(
                state=Job.State.INTERRUPTED, message=interrupted_message(job) + reason)
            _end_task_row(job.task_id)
        raise
    finally:
        beat.stop.set()
        beat.join()


def interrupted_message(job: Job) -> str:
    done = f"{job.done} of {job.total}" if job.total else "part"
    stage = f" during “{job.message}”" if job.message else ""
    return f"Interrupted: the worker stopped{stage} after {done} step(s); resume to continue from there."


def reap_stale(queryset=None, *, now=None) -> list[int]:
    """Mark running jobs with an expired lease interrupted; returns their ids."""
    now = now or timezone.now()
    expired = now - timedelta(seconds=LEASE_SECONDS)
    candidates = (queryset if queryset is not None else Job.objects.all()).filter(
        state=Job.State.RUNNING, heartbeat_at__lt=expired)
    reaped = []
    for job in candidates:
        changed = Job.objects.filter(pk=job.pk, state=Job.State.RUNNING, heartbeat_at__lt=expired).update(
            state=Job.State.INTERRUPTED, message=interrupted_message(job))
        if changed:
            reaped.append(job.pk)
            _end_task_row(job.task_id)
            log.warning("job %s (%s) interrupted: worker %s stopped renewing its lease", job.pk, job.kind, job.worker)
    return reaped


def _end_task_row(task_id: str) -> None:
    """The django-tasks row of a dead worker stays RUNNING forever; mark it failed."""
    if not task_id:
        return
    from django_tasks.base import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.filter(id=task_id, status=TaskResultStatus.RUNNING).update(
        status=TaskResultStatus.FAILED, finished_at=timezone.now())


def resume(job: Job) -> Job:
    """Queue an interrupted job again; the feature's task continues from what was saved."""
    from django.utils.module_loading import autodiscover_modules

    autodiscover_modules("tasks", "jobs")  # each feature registers its kinds when its module loads
    task = _RESUMABLE.get(job.kind)
    if task is None:
        raise JobError(f"jobs of kind “{job.kind}” cannot be resumed")
    changed = Job.objects.filter(pk=job.pk, state=Job.State.INTERRUPTED).update(
        state=Job.State.QUEUED, message="Queued again (resuming)", worker="", heartbeat_at=None)
    if not changed:
        job.refresh_from_db()
        raise JobError(f"job {job.pk} is {job.get_state_display().lower()}, not interrupted: nothing to resume")
    return enqueue(job, task)


def refresh(job: Job) -> Job:
    """The job as a status page should show it: an expired lease is reported as interrupted."""
    if job.state == Job.State.RUNNING and reap_stale(Job.objects.filter(pk=job.pk)):
        job.refresh_from_db()
    return job


def reap_all() -> None:
    """Everything a worker reaps: each feature's registered reapers, then stale jobs."""
    from django.utils.module_loading import autodiscover_modules

    autodiscover_modules("tasks", "jobs")  # features register their reapers when their module loads
    for reaper in list(_REAPERS):  # first: a feature may renew a job that this live worker keeps going
        reaper()
    reap_stale()


def reaper_loop(stop: threading.Event, every: float | None = None) -> None:
    """Run in the worker process: reap stale jobs until ``stop`` is set (errors are logged, not fatal).

    By default every 15 s, or every third of the lease when that is shorter (a lost lease is
    taken over soon after it expires)."""
    every = every if every is not None else min(15.0, LEASE_SECONDS / 3)
    while not stop.wait(every):
        try:
            close_old_connections()
            reap_all()
        except Exception:  # noqa: BLE001 - the reaper must outlive database hiccups
            log.exception("reaping stale jobs failed; trying again in %s s", every)
    connection.close()

