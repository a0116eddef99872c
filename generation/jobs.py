"""Batch distractor generation as a background job with live progress and a per-question report.

:func:`start_distractor_job` records an ``casebook.models.Job`` and enqueues :data:`distractor_task`
on the django-tasks queue (``manage.py worker`` runs it; tests use the immediate backend).
:func:`run_distractor_job` does the work: requests are prepared in the job's thread, sent to the
endpoint from at most ``concurrency`` worker threads, and each question's options are written by the
job's thread **as soon as its answer arrives** — so when the endpoint dies half-way, everything
already answered is saved, and the job's result lists each failed question with the reason.
"""
from __future__ import annotations

import logging
from typing import Any

from django.db.models import Case, IntegerField, When
from django_tasks import task

from annotate.models import Game, Question
from casebook.jobs import enqueue, lease, register_resumable
from casebook.llm import LLMClient, LLMError, LLMSettings
from casebook.models import Job

from .distractors import (
    GenerationError,
    ask_llm,
    ask_offline,
    build_request,
    check_eligible,
    game_pools,
    missing_count,
    store_options,
)

log = logging.getLogger(__name__)

JOB_KIND = "distractors"
MODES = ("auto", "llm", "offline")


def resolve_mode(mode: str, settings: LLMSettings) -> str:
    """``auto`` means the LLM when a key is configured, else the offline heuristics."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    if mode == "auto":
        return "llm" if settings.configured else "offline"
    return mode


def create_distractor_job(game: Game, question_ids: list[int], *, n: int = 3, mode: str = "auto",
                          model: str | None = None, concurrency: int | None = None, user=None) -> Job:
    """The job row (state queued), not yet enqueued; :func:`start_distractor_job` also enqueues it."""
    settings = LLMSettings.from_settings(model=model, concurrency=concurrency)
    resolved = resolve_mode(mode, settings)
    ids = list(dict.fromkeys(int(i) for i in question_ids))
    job = Job.objects.create(
        kind=JOB_KIND, game=game, user=user if getattr(user, "is_authenticated", False) else None,
        total=len(ids), params={"question_ids": ids, "n": n, "mode": resolved, "model": settings.model if resolved == "llm" else "",
                                "concurrency": settings.concurrency},
        message="queued",
    )
    return job


def start_distractor_job(game: Game, question_ids: list[int], *, n: int = 3, mode: str = "auto",
                         model: str | None = None, concurrency: int | None = None, user=None) -> Job:
    """Create the job row and enqueue it; returns the job (its state says how far it got)."""
    job = create_distractor_job(game, question_ids, n=n, mode=mode, model=model, concurrency=concurrency, user=user)
    return enqueue(job, distractor_task)


@task()
def distractor_task(job_id: int) -> dict[str, Any]:
    """The queued entry point (arguments must be JSON: just the job id), run under the job's lease.

    Resuming an interrupted job runs it again: questions that got their distractors are skipped.
    """
    with lease(job_id):
        return run_distractor_job(job_id)


register_resumable(JOB_KIND, distractor_task)


class _Progress:
    """Keeps the job row current: one UPDATE per finished question."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.result: dict[str, Any] = {"written": {}, "failures": [], "skipped": [], "origin": "", "model": ""}

    def save(self, **fields: Any) -> None:
        for key, value in fields.items():
            setattr(self.job, key, value)
        self.job.result = self.result
        Job.objects.filter(pk=self.job.pk).update(result=self.result, done=self.job.done,
                                                  **{k: getattr(self.job, k) for k in fields})

    def written(self, question: Question, option_ids: list[int]) -> None:
        self.result["written"][str(question.pk)] = option_ids
        self.job.done += 1
        self.save()

    def failed(self, question_id: int, stem: str, error: str) -> None:
        self.result["failures"].append({"question": question_id, "stem": stem[:120], "error": error})
        self.job.done += 1
        self.save()

    def skipped(self, question_id: int, reason: str) -> None:
        self.result["skipped"].append({"question": question_id, "reason": reason})
        self.job.done += 1
        self.save()


def run_distractor_job(job_id: int, *, client: LLMClient | None = None) -> dict[str, Any]:
    """Run a queued job to the end; never raises (the job row carries any failure)."""
    job = Job.objects.select_related("game", "user").get(pk=job_id)
    progress = _Progress(job)
    job.done = 0
    progress.save(state=Job.State.RUNNING, message="running")
    try:
        _run(job, progress, client)
    except Exception as exc:  # noqa: BLE001 - a job must end with a state and a message, not a traceback
        log.exception("distractor job %s crashed", job.pk)
        progress.save(state=Job.State.FAILED, message=f"stopped: {exc}")
        return progress.result
    failures, written = progress.result["failures"], progress.result["written"]
    summary = (f"{len(written)} question(s) got distractors, {len(progress.result['skipped'])} needed none, "
               f"{len(failures)} failed")
    state = Job.State.FAILED if failures and not written else Job.State.DONE
    progress.save(state=state, message=summary)
    return progress.result


def _run(job: Job, progress: _Progress, client: LLMClient | None) -> None:
    params = job.params
    n, mode = int(params.get("n", 3)), params.get("mode", "offline")
    ids = [int(i) for i in params.get("question_ids", [])]
    order = Case(*[When(pk=pk, then=i) for i, pk in enumerate(ids)], output_field=IntegerField()) if ids else None
    questions = list(
        Question.objects.filter(game=job.game, pk__in=ids).select_related("game", "perspective")
        .prefetch_related("options", "evidence").order_by(order if order is not None else "pk")
    )
    found = {q.pk for q in questions}
    for missing in [i for i in ids if i not in found]:
        progress.failed(missing, "", "no such question in this game")
    names = list(job.game.characters.values_list("name", flat=True))
    scripts = list(job.game.characters.exclude(script="").values_list("script", flat=True))
    pools = game_pools(job.game)
    user = job.user
    if mode == "llm" and client is None:
        try:
            client = LLMClient(LLMSettings.from_settings(model=params.get("model") or None,
                                                         concurrency=params.get("concurrency")))
        except LLMError as exc:
            for q in questions:
                progress.failed(q.pk, q.stem, str(exc))
            return
    if client is not None:
        progress.result.update(origin="llm", model=client.model)
    else:
        progress.result.update(origin="heuristic")

    todo = []
    for q in questions:
        try:
            check_eligible(q)
        except GenerationError as exc:
            progress.failed(q.pk, q.stem, str(exc))
            continue
        need = missing_count(q, n)
        if need == 0:
            progress.skipped(q.pk, "already has enough distractors")
            continue
        todo.append((q, build_request(q, need, names, scripts)))

    if client is None:
        for q, req in todo:
            try:
                texts = ask_offline(req, pools, seed=q.pk)
                rows = store_options(q, texts, origin="heuristic", user=user)
                progress.written(q, [r.pk for r in rows])
            except GenerationError as exc:
                progress.failed(q.pk, q.stem, str(exc))
        return

    def ask(pair: tuple[Question, Any]) -> list[str]:
        return ask_llm(client, pair[1])  # network only: no database in worker threads

    for (q, _req), texts, error in client.map(ask, todo):
        if error is not None:
            progress.failed(q.pk, q.stem, str(error) if isinstance(error, (LLMError, GenerationError))
                            else f"{error.__class__.__name__}: {error}")
            continue
        rows = store_options(q, texts, origin="llm", model_name=client.model, user=user)
        progress.written(q, [r.pk for r in rows])
