"""Dense Chinese scans (issue 21): 10.5 pt pages of real role scripts with full-width punctuation,
digits, times and Latin names inside Chinese, read through the ingest read and clean stages.

Thresholds, per page: CER ≤ 2.5 % as the other OCR tests count it (NFKC, whitespace ignored) and
≤ 2.5 % width-sensitive too (``，`` for ``,`` counts), paragraphs joined back (no page-width line
breaks left); English ≤ 0.3 % (0.05–0.11 % measured before the change). Pages and numbers:
``benchmarks/ocr_quality.py``. Two Chinese pages and one English page: ~20 s of OCR.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from casebook.text import CJK, CJK_PUNCT
from ingest.pipeline import clean_documents
from ingest.read import collect_sources, read_sources

from .ingest_makers import (
    DENSE_FONT_PT,
    EN_GAME,
    ZH_GAMES,
    cer,
    degrade,
    dense_zh_pages,
    error_classes,
    first_chars,
    image_pdf,
    render_page,
    strict_cer,
    text_pdf,
    wellplay_scripts,
)

SIN, FOUNTAIN = list(ZH_GAMES)


def _ingest_read_clean(folder: Path, tmp_path: Path, language: str) -> dict[str, str]:
    """The ingest read stage (both cores) and clean stage: file stem → page text."""
    stage = tmp_path / f"stage_{language}"
    stage.mkdir()
    sources, problems = collect_sources([folder], stage)
    docs = read_sources(sources, "chi_sim" if language == "zh" else "eng", problems, workers=2, want_previews=False)
    clean_documents(docs, language)
    assert not [p for p in problems if p.severity != "info"], problems
    return {Path(doc.name).stem: "\n".join(p.text for p in doc.pages) for doc in docs}


@pytest.mark.ocr
def test_dense_chinese_pages_of_two_games(tmp_path, wellplay_anchor):
    sin = dense_zh_pages(wellplay_anchor, SIN, 1)[0]  # clean 300 dpi scan
    fountain = dense_zh_pages(wellplay_anchor, FOUNTAIN, 2)[1]  # rotated 1.5°, noise and specks
    folder = tmp_path / "scans"
    folder.mkdir()
    pages = {"sin": sin, "fountain": fountain}
    for name, text in pages.items():
        img = render_page(text_pdf([(None, text)], "zh", font_size=DENSE_FONT_PT))
        if name == "fountain":
            img = degrade(img, angle=1.5, noise=18, seed=6)
        (folder / f"{name}.pdf").write_bytes(image_pdf([img]))
    read = _ingest_read_clean(folder, tmp_path, "zh")

    for name, reference in pages.items():
        text = read[name]
        assert cer(text, reference) <= 0.025, (name, cer(text, reference))
        assert strict_cer(text, reference) <= 0.025, (name, strict_cer(text, reference), error_classes(text, reference))
        lines = [line for line in text.split("\n") if line.strip()]
        assert len(lines) <= len(reference.split("\n")) + 3, (name, lines)  # wrapped lines joined into paragraphs
        assert not re.search(f"[{CJK}{CJK_PUNCT}] +[{CJK}{CJK_PUNCT}]", text)  # no OCR spaces left in Chinese
    assert "张村民（Zhang Villager）、王村长（Chief Wang）" in read["sin"]  # Latin glosses in full-width brackets
    assert "第1题：赵慈善被谁杀死的？" in read["sin"]
    assert "2015年，张村民出生在A国" in read["sin"]  # digits and a Latin letter inside Chinese


@pytest.mark.ocr
def test_dense_english_page_is_not_worse(tmp_path, wellplay_anchor):
    body = "\n".join(wellplay_scripts(wellplay_anchor, "en", EN_GAME).values())
    text = first_chars(body, 2400)
    folder = tmp_path / "scans"
    folder.mkdir()
    img = render_page(text_pdf([(None, text)], "en", font_size=DENSE_FONT_PT))
    (folder / "page.pdf").write_bytes(image_pdf([img]))
    read = _ingest_read_clean(folder, tmp_path, "en")
    assert cer(read["page"], text) <= 0.003, cer(read["page"], text)


def test_error_classes_name_what_went_wrong():
    reference = "2015年，张村民（Zhang）说：好。\n第二段"
    assert error_classes(reference, reference) == dict.fromkeys(error_classes("", ""), 0)
    counts = error_classes("2016年,张村氏(Zhamg)说：好。第 二段", reference)
    assert counts == {"width": 3, "punctuation": 0, "digit": 1, "latin": 1, "cjk_substitution": 1,
                      "insertion": 0, "deletion": 0, "space_break": 2}
    assert error_classes("张村民民", "张村民")["insertion"] == 1
    assert error_classes("张民", "张村民")["deletion"] == 1
    assert strict_cer("好,", "好，") == 0.5 and cer("好,", "好，") == 0.0
