"""Session pages under ``/g/<slug>/sessions/``: the list, and the turn-by-turn annotation page
with its JSON endpoints (save, suggest, review transitions). Logic lives in services/assist."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotate.services import permissions, states
from casebook.interchange import Status

from . import assist, services
from .export import gold_annotation
from .importer import import_session
from .models import Session, Turn, TurnAnnotation
from .readers import LogError, read_log
from .vocab import EMOTION_LABELS_ZH, EMOTIONS, SESSION_TYPES


def _session(request: HttpRequest, slug: str, pk: int, action: str = "view") -> tuple[Session, str]:
    game, role = permissions.game_for(request.user, slug, action)
    return get_object_or_404(Session, game=game, pk=pk), role


def _payload(a: TurnAnnotation | None) -> dict | None:
    if a is None:
        return None
    return {"id": a.pk, "triplets": a.triplets, "face": a.face, "tone": a.tone, "suspicions": a.suspicions,
            "version": a.version, "status": a.status, "source": a.source, "reason": a.reject_reason,
            "annotator": a.annotator.username if a.annotator else None}


UPLOAD_FORMATS = ("onuw", "csv", "jsonl")  # a WhodunitBench run is a folder: manage.py import_session


@login_required
def session_list(request: HttpRequest, slug: str) -> HttpResponse:
    """The game's sessions; members who may create items can upload a log here (all or nothing)."""
    game, role = permissions.game_for(request.user, slug)
    errors: list[str] = []
    if request.method == "POST":
        permissions.require(request.user, game, "create")
        upload = request.FILES.get("log")
        fmt = request.POST.get("format", "")
        type_key = request.POST.get("session_type") or None
        if upload is None or fmt not in UPLOAD_FORMATS or (type_key and type_key not in SESSION_TYPES):
            errors = ["Choose a log file, its format (ONUW JSON, CSV or JSONL) and a session type."]
        else:
            errors = _import_upload(upload, fmt, type_key, request.POST.get("title", ""), game)
            if not errors:
                session = Session.objects.filter(game=game).latest("pk")
                return redirect("playlogs:session_annotate", slug=game.slug, pk=session.pk)
    sessions = Session.objects.filter(game=game).prefetch_related("players", "turns")
    return render(request, "playlogs/session_list.html", {
        "game": game, "sessions": sessions, "role": role, "errors": errors, "formats": UPLOAD_FORMATS,
        "types": SESSION_TYPES, "can_import": permissions.can(request.user, game, "create", role=role)})


def _import_upload(upload, fmt: str, type_key: str | None, title: str, game) -> list[str]:
    """Read the uploaded file with the same readers as the command; the errors, or [] when imported."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(upload.name).name
        with path.open("wb") as fh:
            for chunk in upload.chunks():
                fh.write(chunk)
        parsed = read_log(path, fmt, title=title.strip() or path.stem, type_key=type_key)
    try:
        import_session(parsed, game=game)
    except LogError as exc:
        return exc.errors
    return []


@login_required
def session_annotate(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    session, role = _session(request, slug, pk)
    turns = list(session.turns.select_related("speaker").prefetch_related("annotations__annotator"))
    reviewer = permissions.has_role(role, permissions.REVIEWER)
    data = {
        "players": session.player_names(),
        "actions": list(session.vocabulary.actions),
        "emotions": list(EMOTIONS), "emotionsZh": EMOTION_LABELS_ZH,
        "turns": [{"index": t.index, "speaker": t.speaker.name if t.speaker else None, "label": t.speaker_label,
                   "text": t.text, "phase": t.phase,
                   "mine": _payload(next((a for a in t.annotations.all() if a.annotator_id == request.user.pk), None)),
                   "reference": _payload(gold_annotation(list(t.annotations.all()))),
                   "others": [_payload(a) for a in t.annotations.all() if reviewer and a.annotator_id
                              and a.annotator_id != request.user.pk and a.status != Status.DRAFT]} for t in turns],
        "canReview": reviewer,
    }
    return render(request, "playlogs/annotate.html", {"game": session.game, "session": session, "role": role,
                                                      "data": data})


def _json_body(request: HttpRequest) -> dict:
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise services.AnnotationError("The request body must be a JSON object.")
    return body


@login_required
@require_POST
def turn_save(request: HttpRequest, slug: str, pk: int, index: int) -> JsonResponse:
    session, _ = _session(request, slug, pk)
    turn = get_object_or_404(Turn, session=session, index=index)
    try:
        body = _json_body(request)
        source = body.get("source") if body.get("source") in TurnAnnotation.Source.values else TurnAnnotation.Source.HUMAN
        saved = services.save_annotation(turn, request.user, body, expected_version=body.get("version"), source=source)
    except services.AnnotationError as exc:
        return JsonResponse({"error": str(exc)}, status=409 if isinstance(exc, services.StaleAnnotation) else 400)
    except PermissionDenied as exc:
        return JsonResponse({"error": str(exc) or "Your role does not allow this."}, status=403)
    return JsonResponse({"annotation": _payload(saved)})


@login_required
@require_POST
def turn_suggest(request: HttpRequest, slug: str, pk: int, index: int) -> JsonResponse:
    session, _ = _session(request, slug, pk, "create")
    turn = get_object_or_404(Turn.objects.select_related("speaker", "session"), session=session, index=index)
    try:
        previous = _json_body(request).get("previous") or {}
    except services.AnnotationError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse({"suggestion": assist.suggest(turn, previous)})


@login_required
@require_POST
def annotation_transition(request: HttpRequest, slug: str, pk: int, ann: int, action: str) -> JsonResponse:
    session, _ = _session(request, slug, pk)
    annotation = get_object_or_404(TurnAnnotation, turn__session=session, pk=ann)
    try:
        body = _json_body(request)
        done = services.transition(annotation, action, request.user, reason=body.get("reason", ""),
                                   expected_version=body.get("version"))
    except (states.TransitionError, services.AnnotationError) as exc:
        return JsonResponse({"error": str(exc)}, status=409 if isinstance(exc, states.StaleVersion) else 400)
    return JsonResponse({"annotation": _payload(done)})
