"""Export (per game, managers) and import (managers, superusers) pages: thin views over ``jobs``."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotate.services import permissions
from casebook.models import Job

from . import jobs
from .service import EXPORT_FORMATS, IMPORT_FORMATS


def _payload(job: Job) -> dict:
    data = {**job.progress_payload(), "result": job.result or {}, "download": None}
    if job.kind == jobs.EXPORT_KIND and job.state == Job.State.DONE and jobs.export_zip(job):
        data["download"] = reverse("exporters:export_download", args=[job.game.slug, job.pk])
    if job.kind == jobs.IMPORT_KIND:
        for game in data["result"].get("games", []):
            if game["slug"] and game["status"] in ("created", "replaced", "unchanged"):
                game["url"] = reverse("annotate:workspace", args=[game["slug"]])
    return data


@login_required
def export_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Choose a format and options; POST starts the background export and shows its progress."""
    game, role = permissions.game_for(request.user, slug, "export")
    if request.method == "POST":
        try:
            job = jobs.start_export_job(game, request.user, fmt=request.POST.get("format", ""),
                                        include_drafts=bool(request.POST.get("include_drafts")),
                                        force=bool(request.POST.get("force")),
                                        allow_empty=bool(request.POST.get("allow_empty")))
        except jobs.JobRefused as exc:
            messages.error(request, str(exc))
        else:
            return redirect("exporters:export_job", slug=slug, pk=job.pk)
    recent = Job.objects.filter(kind=jobs.EXPORT_KIND, game=game)[:10]
    return render(request, "exporters/export.html", {
        "game": game, "role": role, "tab": "export", "formats": EXPORT_FORMATS, "recent": recent,
    })


def _export_job(request: HttpRequest, slug: str, pk: int) -> Job:
    game, _ = permissions.game_for(request.user, slug, "export")
    return get_object_or_404(Job, pk=pk, kind=jobs.EXPORT_KIND, game=game)


@login_required
def export_job(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    job = _export_job(request, slug, pk)
    if request.headers.get("Accept") == "application/json":
        return JsonResponse(_payload(job))
    return render(request, "exporters/job.html", {"game": job.game, "role": "manager", "tab": "export", "job": job,
                                                  "payload": _payload(job), "title": f"Export ({job.params['format']})"})


@login_required
def export_download(request: HttpRequest, slug: str, pk: int) -> FileResponse:
    job = _export_job(request, slug, pk)
    path = jobs.export_zip(job)
    if path is None:
        raise Http404("This export has no ZIP (it failed, or is not finished).")
    return FileResponse(path.open("rb"), as_attachment=True, filename=path.name, content_type="application/zip")


@login_required
def import_page(request: HttpRequest) -> HttpResponse:
    """Upload a ZIP of a published dataset folder; the import runs in the background."""
    if not jobs.may_import(request.user):
        raise PermissionDenied("Importing needs the manager role in some game (or a superuser).")
    if request.method == "POST":
        upload = request.FILES.get("archive")
        try:
            if upload is None:
                raise jobs.JobRefused("Choose the ZIP file to import.")
            job = jobs.start_import_job(request.user, fmt=request.POST.get("format", ""), upload=upload,
                                        replace=bool(request.POST.get("replace")))
        except jobs.JobRefused as exc:
            messages.error(request, str(exc))
        else:
            return redirect("exporters:import_job", pk=job.pk)
    recent = Job.objects.filter(kind=jobs.IMPORT_KIND, user=request.user)[:10]
    return render(request, "exporters/import.html", {"formats": IMPORT_FORMATS, "recent": recent})


@login_required
def import_job(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=pk, kind=jobs.IMPORT_KIND)
    if not (request.user.is_superuser or job.user_id == request.user.pk):
        raise Http404("No such job")
    if request.headers.get("Accept") == "application/json":
        return JsonResponse(_payload(job))
    return render(request, "exporters/job.html", {"job": job, "payload": _payload(job),
                                                  "title": f"Import ({job.params['format']})"})
