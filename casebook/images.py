"""Image helpers shared by the format readers, the ingest pipeline and the media views: the one place
that tells a file's type from its bytes.

Published clue images lie about their type (WhodunitBench ``image_1.png`` files are JPEG), come
in huge scans (7,014 x 4,960) and are named ``image_2`` / ``image_10``; these helpers sniff the real
type from the bytes, refuse decompression bombs with a clear message, sort names the way people
number them, and fingerprint images so duplicates can be reported.
"""
from __future__ import annotations

import io
import os
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Pillow is imported where images are decoded, not by every page that sniffs bytes
    from PIL import Image

__all__ = [
    "DEFAULT_MAX_PIXELS",
    "ImageTooLarge",
    "UnsupportedImage",
    "hamming",
    "numeric_sort_key",
    "open_image_safely",
    "perceptual_hash",
    "sniff_image",
    "sniff_media_type",
]

# The largest published clue scan is 7,014 x 4,960 = 34.8 Mpx; allow headroom, refuse bombs.
DEFAULT_MAX_PIXELS = 100_000_000


_BMP_DIB_SIZES = {12, 16, 40, 52, 56, 64, 108, 124}  # BITMAPINFOHEADER variants: "BM" alone is weak


class UnsupportedImage(ValueError):
    """The bytes are not an image format we accept (PNG, JPEG, GIF, WebP, TIFF, BMP)."""


class ImageTooLarge(ValueError):
    """The image declares more pixels than allowed (a decompression bomb or an absurd scan)."""


def sniff_image(data: bytes) -> tuple[str, str]:
    """(media type, canonical extension) from the magic bytes; raises :class:`UnsupportedImage`."""
    head = bytes(data[:16])  # 16 bytes are enough for every signature below
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png", ".png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg", ".jpg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif", ".gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp", ".webp"
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return "image/tiff", ".tiff"
    if head[:2] == b"BM" and (len(data) < 18 or int.from_bytes(bytes(data[14:18]), "little") in _BMP_DIB_SIZES):
        return "image/bmp", ".bmp"
    if not data:
        raise UnsupportedImage("empty file: no image data")
    shown = head[:8].hex(" ")
    raise UnsupportedImage(
        f"not a supported image (first bytes {shown}); expected PNG, JPEG, GIF, WebP, TIFF or BMP"
    )


def sniff_media_type(head: bytes) -> str:
    """The media type a file's first bytes tell (an accepted image or a PDF); ``application/octet-stream``
    for anything else, SVG included (it can script), so a served upload never passes for a page."""
    if bytes(head[:5]) == b"%PDF-":
        return "application/pdf"
    try:
        return sniff_image(head)[0]
    except UnsupportedImage:
        return "application/octet-stream"


def open_image_safely(
    data_or_path: bytes | str | Path, max_pixels: int = DEFAULT_MAX_PIXELS, *, reduce: bool = False
) -> Image.Image:
    """Open and fully decode an image, refusing anything above ``max_pixels``.

    Pillow's own guard (``Image.MAX_IMAGE_PIXELS``) is process-global and only warns below twice
    the limit, so the size is checked here from the header before decoding. Truncated or corrupt
    files raise :class:`UnsupportedImage` with the reason instead of a Pillow traceback.
    ``reduce=True`` decodes JPEGs at 1/8 scale (JPEG draft mode): every byte is still read, so
    truncation is still caught, at a fraction of the cost; use it to validate, not to display.
    """
    if isinstance(data_or_path, (str, Path)):
        path = Path(data_or_path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UnsupportedImage(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    else:
        data = bytes(data_or_path)
    from PIL import Image

    sniff_image(data)  # clear message for non-images before Pillow guesses
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
            width, height = img.size
            if width * height > max_pixels:
                raise ImageTooLarge(
                    f"image is {width}x{height} = {width * height:,} pixels, above the limit of {max_pixels:,}"
                )
            if reduce and img.format == "JPEG":
                img.draft(img.mode, (max(1, width // 8), max(1, height // 8)))
            img.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageTooLarge(f"image refused as a possible decompression bomb: {exc}") from exc
    except ImageTooLarge:
        raise
    except (OSError, SyntaxError, ValueError) as exc:
        raise UnsupportedImage(f"image cannot be decoded (truncated or corrupt): {exc}") from exc
    return img


_NUMBER = re.compile(r"(\d+)")


def numeric_sort_key(filename: str) -> tuple:
    """Sort key that compares digit runs as numbers, so ``image_2`` < ``image_10``.

    Works on bare names and on paths (folders compare the same way). Ties (``a_01`` vs ``a_1``)
    fall back to the plain string, so the order is total.
    """
    text = str(filename)
    root, ext = os.path.splitext(text)  # "image_1" sorts before "image_1(1)" whatever the extension
    parts = _NUMBER.split(root.casefold())
    key = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p)
    return (key, ext.casefold(), text)


def perceptual_hash(img: Image.Image) -> int:
    """64-bit difference hash (dHash): robust to re-encoding and resizing, for near-duplicates."""
    from PIL import Image

    small = img.convert("L").resize((9, 8), Image.Resampling.LANCZOS)
    pixels = small.tobytes()  # one byte per pixel in mode L
    value = 0
    for row in range(8):
        for col in range(8):
            left = pixels[row * 9 + col]
            right = pixels[row * 9 + col + 1]
            value = (value << 1) | (1 if left > right else 0)
    return value


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two hashes (0 = same picture; <= 10 = near-duplicate)."""
    return (a ^ b).bit_count()
