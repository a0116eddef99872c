"""Adding clues by hand: text clues, and image clues checked with Pillow before they are stored."""
from __future__ import annotations

import hashlib
from pathlib import PurePath

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from PIL import Image, UnidentifiedImageError

from annotate.models import Character, Clue, Game
from casebook import audit
from casebook.interchange import ClueKind, ImageKind
from casebook.security import safe_file_name

MAX_IMAGE_BYTES = 30 * 1024 * 1024
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp", "BMP": "image/bmp"}


class ClueError(ValueError):
    """The clue cannot be added; the message is meant for the annotator."""


def _image_info(data: bytes) -> str:
    """The media type of an image, refusing what Pillow cannot read or what is absurdly large."""
    import io

    try:
        with Image.open(io.BytesIO(data)) as img:
            fmt, (w, h) = img.format, img.size
            img.verify()
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        raise ClueError("That file is not an image this app can read (PNG, JPEG, GIF, WebP, BMP).") from exc
    if w * h > settings.CASEBOOK_MAX_IMAGE_PIXELS:
        raise ClueError(f"The image is {w}×{h} pixels, more than the limit of {settings.CASEBOOK_MAX_IMAGE_PIXELS}.")
    if fmt not in MEDIA_TYPES:
        raise ClueError(f"{fmt} images are not supported; use PNG or JPEG.")
    return MEDIA_TYPES[fmt]


@transaction.atomic
def add_clue(game: Game, *, title: str = "", text: str = "", owner_id: int | None = None, filename: str = "",
             data: bytes | None = None, image_kind: str = "", user=None) -> Clue:
    owner = None
    if owner_id:
        owner = Character.objects.filter(game=game, pk=owner_id).first()
        if owner is None:
            raise ClueError("The owner is not a character of this game.")
    if image_kind not in {k.value for k in ImageKind}:
        raise ClueError(f"Unknown image kind {image_kind!r}.")
    position = Clue.objects.filter(game=game).count()
    used = set(Clue.objects.filter(game=game).values_list("key", flat=True))
    if data is not None:
        if len(data) > MAX_IMAGE_BYTES:
            raise ClueError("The image is larger than 30 MB.")
        media_type = _image_info(data)
        name = PurePath(filename or "image.png").name
        key, n = f"img/{name}", 1
        while key in used:
            n += 1
            key = f"img/{PurePath(name).stem}-{n}{PurePath(name).suffix}"
        clue = Clue(game=game, key=key, kind=ClueKind.IMAGE, title=title.strip() or name, owner=owner, position=position,
                    filename=name, media_type=media_type, sha256=hashlib.sha256(data).hexdigest(), image_kind=image_kind,
                    ocr_text=text.strip())
        clue.image.save(safe_file_name(name, data), ContentFile(data), save=False)
    else:
        if not text.strip():
            raise ClueError("A text clue needs its text (or upload an image).")
        n = position + 1
        while f"clue-{n}" in used:
            n += 1
        clue = Clue(game=game, key=f"clue-{n}", kind=ClueKind.TEXT, title=title.strip(), text=text.strip(), owner=owner,
                    position=position)
    clue.save()
    audit.record(game, user, clue, "create", None, audit.snapshot(clue))
    return clue
