"""Job status and resume, for every kind of job (the per-feature pages add their own details)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from annotate.services.permissions import may_resume_job, may_view_job
from casebook.jobs import JobError, resume
from casebook.models import Job


def _visible_job(request: HttpRequest, pk: int) -> Job:
    job = get_object_or_404(Job.objects.select_related("game"), pk=pk)
    if not may_view_job(request.user, job):
        raise Http404("No such job")
    return job


@login_required
@require_GET
def job_json(request: HttpRequest, pk: int) -> JsonResponse:
    """State and progress of one job (polled by "Recent jobs" rows and job pages)."""
    return JsonResponse(_visible_job(request, pk).progress_payload())


@login_required
@require_POST
def job_resume(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue an interrupted job again; it continues from what it had saved."""
    job = _visible_job(request, pk)
    wants_json = "application/json" in request.headers.get("Accept", "")
    if not may_resume_job(request.user, job):
        error = "Only the job's owner or a manager of its game may resume it."
        if wants_json:
            return JsonResponse({"error": error}, status=403)
        messages.error(request, error)
    else:
        try:
            job = resume(job)
        except JobError as exc:
            if wants_json:
                return JsonResponse({"error": str(exc)}, status=409)
            messages.error(request, str(exc))
        else:
            if wants_json:
                return JsonResponse(job.progress_payload())
            messages.success(request, f"Job {job.pk} is queued again and continues from where it stopped.")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/"
    return redirect(target)
