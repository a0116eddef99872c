"""Stage 4, image clues: embedded PDF images and image files → deduplicated, OCR'd, classified clues.

Text-rich vs media-rich (WhodunitBench TIU vs MIU) is decided by OCR *text density*: the share of
the image area covered by word boxes tesseract reads with confidence ≥ 30
(:data:`ingest.ocr.MIN_WORD_CONFIDENCE`). A letter, a newspaper cutting, a chat log or an autopsy
report cover 13–17 % of their area with confident text; a photo of an object with a caption or a
blurry phone screenshot cover under 6 % (measured on the panels of the WhodunitBench XIAOHUA clue
card ``img/1.png`` cropped at 2x: news 0.166, work note 0.144, autopsy 0.135, vitamin-C photo
0.059, chat screenshot 0.026; see ``tests/ingest/test_images.py``). :data:`TEXT_RICH_MIN_DENSITY` sits between the two.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from casebook.images import hamming, open_image_safely, perceptual_hash, sniff_image
from casebook.interchange import Clue, ClueKind, ImageKind, Problem

from .read import MAX_IMAGE_PIXELS, Document

TEXT_RICH_MIN_DENSITY = 0.08
DUPLICATE_MAX_DISTANCE = 4  # dHash bits; re-encoded or rescaled copies differ by 0–3


def classify_image(text_density: float) -> str:
    """``text_rich`` when confident OCR words cover at least TEXT_RICH_MIN_DENSITY of the image."""
    return ImageKind.TEXT_RICH if text_density >= TEXT_RICH_MIN_DENSITY else ImageKind.MEDIA_RICH


@dataclass
class ImageCandidate:
    data: bytes = field(repr=False)
    filename: str
    source: str  # document it came from
    page: int
    ocr_text: str
    confidence: float | None
    text_density: float
    bbox: tuple[float, float, float, float] | None = None


def candidates(documents: list[Document], image_clue_sources: set[str]) -> list[ImageCandidate]:
    """Image files decided to be clues, then images embedded in PDFs, in package order."""
    out: list[ImageCandidate] = []
    for doc in documents:
        if doc.source.kind == "image" and doc.name in image_clue_sources:
            page = doc.pages[0]
            out.append(ImageCandidate(doc.source.path.read_bytes(), PurePosixPath(doc.name).name, doc.name, 1,
                                      page.text, page.confidence, page.text_area))
        for n, image in enumerate(doc.images, start=1):
            stem = PurePosixPath(doc.name).stem
            out.append(ImageCandidate(image.png, f"{stem}-p{image.page}-{n}.png", doc.name, image.page,
                                      image.ocr_text, image.confidence, image.text_area, image.bbox))
    return out


def deduplicate(items: list[ImageCandidate], problems: list[Problem]) -> list[ImageCandidate]:
    """Drop images whose perceptual hash is within DUPLICATE_MAX_DISTANCE of an earlier one."""
    kept: list[tuple[int, ImageCandidate]] = []
    for item in items:
        try:
            img = open_image_safely(item.data, MAX_IMAGE_PIXELS)
        except ValueError as exc:
            problems.append(Problem(item.source, f"image clue unreadable: {exc}", "skipped", location=f"page {item.page}"))
            continue
        digest = perceptual_hash(img)
        twin = next((other for h, other in kept if hamming(h, digest) <= DUPLICATE_MAX_DISTANCE), None)
        if twin is not None:
            problems.append(Problem(item.source, f"image {item.filename} duplicates {twin.filename}",
                                    "kept the first", location=f"page {item.page}", severity="info"))
            continue
        kept.append((digest, item))
    return [item for _, item in kept]


def to_clues(items: list[ImageCandidate], language: str) -> list[Clue]:
    """Interchange image clues, keyed ``img/<n>.<ext>`` in package order."""
    from .clean import clean_text

    clues = []
    for n, item in enumerate(items, start=1):
        media_type, ext = sniff_image(item.data)
        if media_type not in ("image/png", "image/jpeg", "image/webp", "image/gif"):
            # TIFF/BMP do not display in browsers: keep a PNG copy as the clue image.
            buf = io.BytesIO()
            open_image_safely(item.data, MAX_IMAGE_PIXELS).convert("RGB").save(buf, "PNG")
            item.data, media_type, ext = buf.getvalue(), "image/png", ".png"
        text = clean_text(item.ocr_text, language)
        extra = {
            "source_pages": [{"document": item.source, "first": item.page, "last": item.page}],
            "text_density": round(item.text_density, 4),
            "ocr_confidence": round(item.confidence, 1) if item.confidence is not None else None,
        }
        if item.bbox:
            extra["bbox"] = [round(v, 1) for v in item.bbox]
        clues.append(Clue(
            key=f"img/{n}{ext}", kind=ClueKind.IMAGE, title=PurePosixPath(item.filename).stem,
            filename=item.filename, data=item.data, media_type=media_type,
            image_kind=classify_image(item.text_density), ocr_text=text, extra=extra,
        ))
    return clues
