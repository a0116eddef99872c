"""Uploaded files (clue images, page previews, source documents), served only to game members."""
from __future__ import annotations

import mimetypes
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest

from annotate.models import Clue, Page, SourceDocument
from annotate.services import access


def game_id_of_file(name: str) -> int | None:
    """The game a stored file belongs to, looked up by its storage name."""
    for model, field, attr in ((Clue, "image", "game_id"), (Page, "preview", "document__game_id"), (SourceDocument, "file", "game_id")):
        found = model.objects.filter(**{field: name}).values_list(attr, flat=True).first()
        if found:
            return found
    return None


@login_required
def protected_media(request: HttpRequest, path: str) -> FileResponse:
    root = Path(settings.MEDIA_ROOT).resolve()
    full = (root / path).resolve()
    if root not in full.parents or not full.is_file():
        raise Http404("No such file")
    game_id = game_id_of_file(path)
    if game_id is None or not access.visible_games(request.user).filter(pk=game_id).exists():
        raise Http404("No such file")
    response = FileResponse(full.open("rb"), content_type=mimetypes.guess_type(full.name)[0] or "application/octet-stream")
    response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    return response
