"""The Label Studio page of a game: a URL/token form, push and pull buttons, live job status.

Thin views: the work is in :mod:`labelstudio.tasks` (jobs) and :mod:`labelstudio.push` /
:mod:`labelstudio.pull`. Only the game's managers (and superusers) may use it: 404 for
non-members, 403 for annotators and reviewers.
"""
from __future__ import annotations

import os

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotate.models import Game
from annotate.services.permissions import game_for
from casebook.models import Job
from casebook.redirects import permanent_redirect
from review.services import open_conflicts

from . import config
from .agreement import contributions
from .forms import ConnectionForm
from .models import LabelStudioLink
from .pull import agreement_lines
from .tasks import JOB_KINDS, start_job


def _managed_game(request: HttpRequest, slug: str) -> tuple[Game, str]:
    return game_for(request.user, slug, "labelstudio")


def _attention(result: dict) -> list[dict]:
    """What a manager should look at after a job: deletions, conflicts, push warnings, skipped items."""
    out = [{**item, "kind": f"{bucket} {item.get('kind', '')}"} for bucket in ("deleted", "conflict")
           for item in result.get(bucket, [])]
    out += [{**item, "kind": "warning"} for item in result.get("warnings", [])]
    return out + result.get("skipped", [])


def job_payload(job: Job) -> dict:
    result = job.result or {}
    return {
        **job.progress_payload(), "action": job.params.get("action", ""),
        "counts": result.get("counts", {}), "skipped": _attention(result)[:200],
        "summary": result.get("summary", ""),
        "project_url": result.get("project_url", ""), "error": result.get("error", ""),
    }


def _page(request: HttpRequest, game: Game, role: str, form: ConnectionForm, *, status: int = 200) -> HttpResponse:
    jobs = list(Job.objects.filter(game=game, kind__in=JOB_KINDS.values())[:10])
    current = None
    if request.GET.get("job", "").isdigit():
        current = next((j for j in jobs if j.pk == int(request.GET["job"])), None)
    links = list(LabelStudioLink.objects.filter(game=game).order_by("-pushed_at"))
    return render(request, "labelstudio/game.html", {
        "game": game, "role": role, "form": form, "jobs": jobs, "current": current,
        "payload": job_payload(current) if current else None, "links": links,
        "contributions": contributions(game), "agreement": agreement_lines(game),
        "conflicts": open_conflicts(game),
    }, status=status)


@login_required
@require_GET
def game_page(request: HttpRequest, slug: str) -> HttpResponse:
    game, role = _managed_game(request, slug)
    link = LabelStudioLink.objects.filter(game=game).order_by("-pushed_at").first()
    initial_url = link.url if link else os.environ.get("CASEBOOK_LABELSTUDIO_URL", "")
    return _page(request, game, role, ConnectionForm(initial={"url": initial_url, "kinds": link.kinds if link else list(config.KINDS)}))


@login_required
@require_http_methods(["POST"])
def start(request: HttpRequest, slug: str) -> HttpResponse:
    game, role = _managed_game(request, slug)
    form = ConnectionForm(request.POST)
    if not form.is_valid():
        return _page(request, game, role, form, status=400)
    data = form.cleaned_data
    job = start_job(game, data["action"], url=data["url"], token=data["token"], kinds=data.get("kinds"), user=request.user,
                    keep_deleted=data.get("keep_deleted", False))
    return redirect(f"{reverse('labelstudio:game', kwargs={'slug': game.slug})}?job={job.pk}")


@login_required
@require_GET
def job_status(request: HttpRequest, slug: str, job_pk: int) -> JsonResponse:
    """Polled by the page while a job runs."""
    game, _ = _managed_game(request, slug)
    job = get_object_or_404(Job, pk=job_pk, game=game, kind__in=JOB_KINDS.values())
    return JsonResponse(job_payload(job))



@login_required
def moved_by_pk(request: HttpRequest, game_pk: int, to: str, job_pk: int | None = None) -> HttpResponse:
    """The old ``/labelstudio/<game pk>/…`` addresses: a permanent redirect to ``/g/<slug>/labelstudio/…``.

    Members only (404 otherwise), so that a game's slug is never told to someone outside it.
    """
    slug = get_object_or_404(Game.objects.only("slug"), pk=game_pk).slug
    game, _ = game_for(request.user, slug)
    kwargs: dict[str, object] = {"slug": game.slug, **({"job_pk": job_pk} if job_pk is not None else {})}
    return permanent_redirect(request, reverse(to, kwargs=kwargs))
