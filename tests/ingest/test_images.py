"""Image clues: text-rich vs media-rich by OCR text density, duplicates removed by perceptual hash."""
from __future__ import annotations

import io

import pytest

from casebook.interchange import ImageKind
from ingest.images import TEXT_RICH_MIN_DENSITY, ImageCandidate, classify_image, deduplicate, to_clues
from ingest.ocr import ocr_image

from .conftest import panel
from .ingest_makers import png_bytes


def test_threshold_is_the_documented_one():
    assert classify_image(TEXT_RICH_MIN_DENSITY) == ImageKind.TEXT_RICH
    assert classify_image(TEXT_RICH_MIN_DENSITY - 0.001) == ImageKind.MEDIA_RICH


@pytest.mark.ocr
def test_real_clue_cards_are_classified(clue_card):
    autopsy = ocr_image(panel(clue_card, "autopsy"), "eng", ("grayscale",), want_preview=False)
    vitamin = ocr_image(panel(clue_card, "vitamin"), "eng", ("grayscale",), want_preview=False)
    assert classify_image(autopsy.text_area) == ImageKind.TEXT_RICH, autopsy.text_area
    assert classify_image(vitamin.text_area) == ImageKind.MEDIA_RICH, vitamin.text_area
    assert "vitamin" in vitamin.text.lower()


def test_duplicates_removed_even_when_re_encoded(clue_card):
    img = panel(clue_card, "news")
    jpeg = io.BytesIO()
    img.resize((img.width // 2, img.height // 2)).save(jpeg, "JPEG", quality=80)
    other = png_bytes(panel(clue_card, "vitamin"))
    items = [
        ImageCandidate(png_bytes(img), "news.png", "a.pdf", 1, "", None, 0.2),
        ImageCandidate(jpeg.getvalue(), "news-copy.jpg", "b.pdf", 2, "", None, 0.2),
        ImageCandidate(other, "vitamin.png", "img/2.png", 1, "", None, 0.01),
    ]
    problems = []
    kept = deduplicate(items, problems)
    assert [k.filename for k in kept] == ["news.png", "vitamin.png"]
    assert "duplicates news.png" in problems[0].message and problems[0].file == "b.pdf"
    clues = to_clues(kept, "en")
    assert [(c.key, c.image_kind, c.media_type) for c in clues] == [
        ("img/1.png", ImageKind.TEXT_RICH, "image/png"), ("img/2.png", ImageKind.MEDIA_RICH, "image/png")]
    assert clues[0].extra["source_pages"] == [{"document": "a.pdf", "first": 1, "last": 1}]
