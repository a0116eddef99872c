"""Pages: start a synthetic game (a background job with per-stage progress) and a draft's synthesis record."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.services.permissions import MANAGER, game_for, has_role
from casebook.models import Job

from .forms import SynthesisForm
from .jobs import JOB_KIND, start_rerun_job, start_synthesis_job
from .models import SynthesisRun
from .pipeline import RERUNNABLE, SynthesisSettings


def _endpoint_note() -> str:
    from casebook.llm import LLMSettings

    settings = LLMSettings.from_settings()
    if settings.configured:
        return f"Requests go to {settings.describe()}."
    return ("No LLM endpoint is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a local server). "
            "Synthesis cannot run offline.")


@login_required
def new(request):
    form = SynthesisForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        job = start_synthesis_job(SynthesisSettings(**form.cleaned_data), user=request.user)
        return redirect("synthesis:job", pk=job.pk)
    jobs = Job.objects.filter(kind=JOB_KIND, user=request.user)[:10]
    return render(request, "synthesis/new.html", {"form": form, "jobs": jobs, "endpoint": _endpoint_note()})


def _own_job(request, pk: int) -> Job:
    job = get_object_or_404(Job, pk=pk, kind=JOB_KIND)
    if not (request.user.is_superuser or job.user_id == request.user.pk):
        raise Http404("No such job")
    return job


def job_payload(job: Job) -> dict:
    payload = job.progress_payload()
    if job.game_id and job.state == Job.State.DONE:
        payload["game_url"] = reverse("synthesis:game", args=[job.game.slug])
    payload["failure"] = (job.result or {}).get("failure") or {}
    return payload


@login_required
def job_detail(request, pk: int):
    job = _own_job(request, pk)
    return render(request, "synthesis/job.html", {"job": job, "payload": job_payload(job)})


@login_required
def job_status(request, pk: int):
    return JsonResponse(job_payload(_own_job(request, pk)))


@login_required
def game(request, slug: str):
    game_row, role = game_for(request.user, slug)
    run = SynthesisRun.objects.filter(game=game_row).first()
    if run is None:
        raise Http404("This game was not synthesised")
    records = run.records.all().only("stage", "key", "round", "ok", "problems", "usage", "cost", "seconds", "error", "model")
    return render(request, "synthesis/game.html", {
        "game": game_row, "run": run, "records": records, "may_rerun": has_role(role, MANAGER), "stages": RERUNNABLE,
        "errors": sum(1 for c in run.checks if c["severity"] == "error"), "settings": run.settings,
    })


@login_required
def record(request, slug: str, pk: int):
    game_row, _role = game_for(request.user, slug)
    run = get_object_or_404(SynthesisRun, game=game_row)
    item = get_object_or_404(run.records, pk=pk)
    return JsonResponse({"stage": item.stage, "key": item.key, "messages": item.messages, "reply": item.reply,
                         "problems": item.problems, "params": item.params, "usage": item.usage, "error": item.error})


@login_required
@require_POST
def rerun(request, slug: str):
    game_row, role = game_for(request.user, slug)
    if not has_role(role, MANAGER):
        messages.error(request, "Only a manager of this game can re-run a synthesis stage.")
        return redirect("synthesis:game", slug=slug)
    stage = request.POST.get("stage", "")
    run = get_object_or_404(SynthesisRun, game=game_row)
    if stage not in RERUNNABLE:
        messages.error(request, f"Unknown stage {stage!r}.")
        return redirect("synthesis:game", slug=slug)
    job = start_rerun_job(run, stage, user=request.user)
    return redirect("synthesis:job", pk=job.pk)
