"""Thin views: upload → background job with live progress; the split editor. Logic lives in
``tasks``, ``forms`` and ``build``."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotate.models import Membership
from annotate.services.permissions import MANAGER, game_for, has_role
from casebook.models import Job

from .build import InvalidSplit, rebuild_from_split, set_image_kinds, stored_pages, stored_split
from .forms import SplitFormError, UploadForm, decisions_from_post
from .pipeline import IngestOptions
from .split import KINDS, split_version
from .tasks import start_upload_job


def _may_ingest(user) -> bool:
    return user.is_superuser or Membership.objects.filter(user=user).exists()


def _own_job(request, pk: int) -> Job:
    job = get_object_or_404(Job, pk=pk, kind="ingest")
    if not (request.user.is_superuser or job.user_id == request.user.pk):
        raise Http404("No such job")
    return job


@login_required
def upload(request):
    if not _may_ingest(request.user):
        raise PermissionDenied("Ingesting needs membership of a game (or a superuser).")
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        options = IngestOptions(title=data["title"], language=data["language"], characters=form.cast(),
                                traditional=data["traditional"], replace=data["replace"])
        job = start_upload_job(request.user, data["files"], options)
        return redirect("ingest:job", pk=job.pk)
    jobs = Job.objects.filter(kind="ingest", user=request.user)[:10]
    return render(request, "ingest/upload.html", {"form": form, "jobs": jobs})


def job_payload(job: Job) -> dict:
    data = {**job.progress_payload(), "result": job.result or None, "game": None, "split_url": None, "game_url": None}
    if job.game_id:
        data["game"] = job.game.slug
        data["split_url"] = reverse("ingest:split", args=[job.game.slug])
        data["game_url"] = reverse("annotate:workspace", args=[job.game.slug])
    return data


@login_required
def job_status(request, pk: int):
    job = _own_job(request, pk)
    return render(request, "ingest/job.html", {"job": job, "payload": job_payload(job)})


@login_required
@require_GET
def job_json(request, pk: int):
    return JsonResponse(job_payload(_own_job(request, pk)))


@login_required
def split_editor(request, slug: str):
    game, role = game_for(request.user, slug)
    pages, _images, records = stored_pages(game)
    if not pages:
        raise Http404("This game was not ingested: it has no source pages to split.")
    current = stored_split(game)
    if request.method == "POST":
        if not has_role(role, MANAGER):
            raise PermissionDenied("Changing the split needs the manager role.")
        if "image-kinds" in request.POST:
            kinds = {k[len("kind-"):]: v for k, v in request.POST.items() if k.startswith("kind-")}
            try:
                changed = set_image_kinds(game, kinds)
            except InvalidSplit as exc:
                messages.error(request, str(exc))
            else:
                messages.success(request, f"{changed} image clue kind(s) changed.")
            return redirect("ingest:split", slug=game.slug)
        try:
            decisions = decisions_from_post(request.POST, list(records), current)
            result = rebuild_from_split(game, decisions, user=request.user,
                                        expected_version=request.POST.get("split-version", ""))
        except (SplitFormError, InvalidSplit) as exc:
            messages.error(request, f"Split not applied: {exc}")
        else:
            messages.success(request, f"Game rebuilt from {len(decisions)} boundaries ({result.status}).")
        return redirect("ingest:split", slug=game.slug)
    text = {(p.source, p.number): p.text for p in pages}
    previews = {
        (doc.filename, page.number): page.preview.url if page.preview else ""
        for doc in records.values() for page in doc.pages.all()
    }
    rows = []
    for d in current:
        page_text = text.get((d.source, d.start_page), "")
        lines, offset = [], 0
        for line in page_text.split("\n"):
            lines.append({"offset": offset, "text": line, "here": offset == d.start_offset})
            offset += len(line) + 1
        rows.append({"d": d, "preview": previews.get((d.source, d.start_page), ""),
                     "context": page_text[d.start_offset:d.start_offset + 80].split("\n")[0], "lines": lines})
    page_counts = {name: doc.pages.count() for name, doc in records.items()}
    return render(request, "ingest/split.html", {
        "game": game, "role": role, "rows": rows, "kinds": KINDS, "sources": page_counts,
        "can_edit": has_role(role, MANAGER), "summary": game.extra.get("ingest", {}).get("summary", {}),
        "split_version": split_version(current),
        "image_clues": game.clues.filter(kind="image").order_by("position"),
    })
