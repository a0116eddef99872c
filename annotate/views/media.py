"""Uploaded files (clue images, page previews, source documents), served only to game members."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest

from annotate.models import Clue, Page, SourceDocument
from annotate.services import permissions
from casebook.images import sniff_media_type
from casebook.security import INLINE_TYPES, MEDIA_CSP


def game_id_of_file(name: str) -> int | None:
    """The game a stored file belongs to, looked up by its storage name."""
    for model, field, attr in ((Clue, "image", "game_id"), (Page, "preview", "document__game_id"), (SourceDocument, "file", "game_id")):
        found = model.objects.filter(**{field: name}).values_list(attr, flat=True).first()
        if found:
            return found
    return None


@login_required
def protected_media(request: HttpRequest, path: str) -> FileResponse:
    """Serve a member's file with its sniffed type; see ``casebook.security`` for why."""
    root = Path(settings.MEDIA_ROOT).resolve()
    full = (root / path).resolve()
    if root not in full.parents or not full.is_file():
        raise Http404("No such file")
    game_id = game_id_of_file(path)
    if game_id is None or not permissions.visible_games(request.user).filter(pk=game_id).exists():
        raise Http404("No such file")
    handle = full.open("rb")
    media_type = sniff_media_type(handle.read(18))
    handle.seek(0)
    inline = media_type in INLINE_TYPES  # only raster images; anything else downloads, never renders
    response = FileResponse(handle, content_type=media_type, as_attachment=not inline, filename=full.name)
    response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = MEDIA_CSP
    return response
