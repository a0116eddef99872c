"""OCR of scans and photos (tesseract): split found on scans, CER under the stated thresholds.

Thresholds (character error rate vs the source script, whitespace ignored, NFKC):
clean 300 dpi scan ≤ 3 % Chinese, ≤ 1 % English; rotated (1.5–2°) noisy scan ≤ 5 % Chinese,
≤ 2 % English. A handful of pages only: OCR costs ~3 s a page here.
"""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from ingest.ocr import estimate_skew, to_grayscale
from ingest.pipeline import IngestOptions, prepare

from .ingest_makers import cer, degrade, first_chars, image_pdf, phone_photo, png_bytes, render_page, text_pdf

pytestmark = pytest.mark.ocr


def _scan(text: str, language: str, angle: float = 0.0, noise: float = 0.0) -> Image.Image:
    return degrade(render_page(text_pdf([(None, text)], language)), angle=angle, noise=noise)


def test_chinese_scans_split_and_cer(tmp_path, zh_scripts):
    a, b = "张村民", "胡调研"
    parts = {a: first_chars(zh_scripts[a], 550), b: first_chars(zh_scripts[b], 550)}
    (tmp_path / f"{a}.pdf").write_bytes(image_pdf([_scan(parts[a], "zh")]))  # clean scan, no text layer
    (tmp_path / f"{b}_page1.png").write_bytes(png_bytes(_scan(parts[b], "zh", angle=1.5, noise=18)))
    prepared = prepare([tmp_path], IngestOptions("罪恶", "zh", characters=list(zh_scripts), workers=2))
    game = prepared.game
    assert [c.name for c in game.characters] == [a, b]

    clean_cer = cer(game.character(a).script, parts[a])
    noisy_cer = cer(game.character(b).script, parts[b])
    assert clean_cer <= 0.03, clean_cer
    assert noisy_cer <= 0.05, noisy_cer
    assert prepared.summary.pages_by_method == {"ocr": 2}
    assert prepared.summary.mean_ocr_confidence and prepared.summary.mean_ocr_confidence > 70
    assert game.character(a).extra["source_pages"] == [{"document": f"{a}.pdf", "first": 1, "last": 1}]


def test_english_scan_and_exif_rotated_phone_photo(tmp_path, en_scripts):
    a, b = "Chief Wang", "Officer Li"
    parts = {a: first_chars(en_scripts[a], 1400), b: first_chars(en_scripts[b], 1400)}
    (tmp_path / f"{a}.pdf").write_bytes(image_pdf([_scan(parts[a], "en")]))
    (tmp_path / f"{b} page 1.jpg").write_bytes(phone_photo(_scan(parts[b], "en", angle=-2.0, noise=15)))
    prepared = prepare([tmp_path], IngestOptions("Sin", "en", characters=list(en_scripts), workers=2))

    game = prepared.game
    assert [c.name for c in game.characters] == [a, b]
    assert cer(game.character(a).script, parts[a]) <= 0.01
    assert cer(game.character(b).script, parts[b]) <= 0.02


def test_deskew_finds_the_rotation(zh_scripts):
    page = render_page(text_pdf([(None, first_chars(zh_scripts["王村长"], 300))], "zh"), dpi=100)
    for angle in (-2.0, 1.5):
        found = estimate_skew(to_grayscale(degrade(page, angle=angle)))
        assert abs(found + angle) <= 0.25, (angle, found)


def test_scanned_combined_pdf_headings_found(tmp_path, zh_scripts):
    a, b = "张村民", "王村长"
    part_a = first_chars(zh_scripts[a].split("\n", 1)[1], 260)
    part_b = first_chars(zh_scripts[b].split("\n", 1)[1], 200)
    page1 = text_pdf([(f"角色：{a}", part_a)], "zh")
    page2 = text_pdf([(f"{b}的剧本", part_b), ("主持人手册", "真相：张村民就是南城杀人狂。")], "zh",
                     new_page_per_section=False)
    scans = [_scan_pdf(page1, angle=1.0, noise=12), _scan_pdf(page2)]
    (tmp_path / "罪恶.pdf").write_bytes(image_pdf(scans))
    prepared = prepare([tmp_path], IngestOptions("罪恶", "zh", characters=[a, b], workers=2))
    game = prepared.game
    assert [c.name for c in game.characters] == [a, b]
    split = [(d["section"], d["start_page"]) for d in game.extra["ingest"]["split"]]
    assert split == [(a, 1), (b, 2), ("manual", 2)]
    assert cer(game.character(a).script.split("\n", 1)[1], part_a) <= 0.05
    assert cer(game.character(b).script.split("\n", 1)[1], part_b) <= 0.03
    assert "南城杀人狂" in game.truth.text


def test_traditional_chinese_uses_chi_tra(tmp_path, zh_scripts):
    import opencc

    text = opencc.OpenCC("s2t").convert(first_chars(zh_scripts["李警察"], 400))
    (tmp_path / "李警察.pdf").write_bytes(image_pdf([_scan(text, "zh")]))
    prepared = prepare([tmp_path], IngestOptions("罪惡", "zh", traditional=True, workers=1))
    assert prepared.game.extra["ingest"]["ocr_language"] == "chi_tra"
    assert cer(prepared.game.characters[0].script, text) <= 0.03


def _scan_pdf(pdf: bytes, angle: float = 0.0, noise: float = 0.0) -> Image.Image:
    return degrade(render_page(pdf), angle=angle, noise=noise)


def test_stored_scan_is_taken_as_is_and_anything_else_is_rendered(tmp_path, en_scripts):
    import pypdfium2 as pdfium

    from ingest.ocr import embedded_scan, render_pdf_page

    scan = render_page(text_pdf([(None, first_chars(en_scripts["Chief Wang"], 300))], "en"))
    (tmp_path / "scan.pdf").write_bytes(image_pdf([scan]))
    (tmp_path / "text.pdf").write_bytes(text_pdf([(None, "A page with a text layer.")], "en"))
    (tmp_path / "low.pdf").write_bytes(image_pdf([scan.resize((scan.width // 3, scan.height // 3))], dpi=100))

    taken = render_pdf_page(str(tmp_path / "scan.pdf"), 0)
    assert taken.size == scan.size  # the stored pixels: rendering would give 2482 px for 2481
    assert np.abs(np.asarray(taken, dtype=np.int16) - np.asarray(scan, dtype=np.int16)).mean() < 1.0  # JPEG only

    for name in ("text.pdf", "low.pdf"):  # a text page, a 100 dpi scan: rendered at 300 dpi
        pdf = pdfium.PdfDocument(str(tmp_path / name))
        try:
            assert embedded_scan(pdf[0]) is None
        finally:
            pdf.close()
        assert abs(render_pdf_page(str(tmp_path / name), 0).width - 2481) <= 2


def test_batch_reads_like_single_pages_and_isolates_a_bad_page(tmp_path, zh_scripts):
    from ingest.ocr import PageJob, load_page, ocr_image, ocr_pages, run_batch

    texts = [first_chars(zh_scripts[name], 200) for name in ("张村民", "王村长")]
    for i, text in enumerate(texts):
        (tmp_path / f"{i}.pdf").write_bytes(image_pdf([_scan(text, "zh")]))
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    jobs = [PageJob(str(tmp_path / "0.pdf"), 0, "chi_sim"), PageJob(str(tmp_path / "broken.pdf"), 0, "chi_sim"),
            PageJob(str(tmp_path / "1.pdf"), 0, "chi_sim")]

    batch = run_batch(jobs)
    assert isinstance(batch[1], Exception)
    for result, text, job in zip((batch[0], batch[2]), texts, (jobs[0], jobs[2]), strict=True):
        assert cer(result.text, text) <= 0.03
        alone = ocr_image(load_page(job), job.lang, job.steps)  # a tesseract run of its own: same result
        assert (alone.text, alone.confidence) == (result.text, result.confidence)
        assert result.preview.startswith(b"\xff\xd8")  # JPEG preview for the split editor

    ticks = []
    pooled = ocr_pages(jobs, workers=2, progress=ticks.append)
    assert [r.text for r in (pooled[0], pooled[2])] == [batch[0].text, batch[2].text]
    assert isinstance(pooled[1], Exception) and sum(ticks) == 3


def test_batches_keep_one_language_and_balance_the_cores():
    from ingest.ocr import MAX_BATCH, PageJob, plan_batches

    mixed = [PageJob("p.pdf", i, "chi_sim" if i % 3 else "eng") for i in range(40)]
    batches = plan_batches(mixed, workers=2)
    assert sorted(i for b in batches for i in b) == list(range(40))
    for batch in batches:
        assert len({mixed[i].lang for i in batch}) == 1
        assert 1 <= len(batch) <= MAX_BATCH
    assert [len(b) for b in plan_batches(mixed[:6], workers=2)] == [1, 1, 2, 2]  # 2 English, then 4 Chinese
    assert [len(b) for b in plan_batches([PageJob("p.pdf", i, "eng") for i in range(7)], workers=2)] == [4, 3]
    assert len(plan_batches([PageJob("p.pdf", 0, "eng")], workers=2)) == 1
