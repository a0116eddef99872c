"""Stage 1: text layers, embedded images and bad input (each problem named, the rest read)."""
from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

import pdfplumber
from fpdf import FPDF

from ingest.pipeline import IngestOptions, clean_documents, prepare
from ingest.read import collect_sources, drop_repeated_margins, read_sources

from .conftest import panel
from .ingest_makers import FONT, body_of, cer, png_bytes, text_pdf


def _read(paths, tmp_path, lang="chi_sim"):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    sources, problems = collect_sources(paths, work)
    docs = read_sources(sources, lang, problems, workers=1)
    return docs, problems


def test_text_layer_exact_and_running_header_dropped(tmp_path, zh_scripts):
    name = "王村长"
    pdf = tmp_path / f"{name}.pdf"
    pdf.write_bytes(text_pdf([(None, zh_scripts[name])], "zh", running_header="罪恶 · 角色剧本"))
    docs, problems = _read([pdf], tmp_path)
    (doc,) = docs
    assert len(doc.pages) >= 2 and all(p.method == "text-layer" for p in doc.pages)
    assert doc.removed_lines >= 2 * len(doc.pages)  # header + "- n -" footer on every page
    clean_documents(docs, "zh")
    text = "\n".join(p.text for p in doc.pages)
    assert "角色剧本" not in text and "- 1 -" not in text
    assert cer(text, zh_scripts[name]) <= 0.01
    assert all(p.preview.startswith(b"\xff\xd8") for p in doc.pages)  # JPEG previews


def test_margin_rules():
    pages = [["Sin", "text a", "1"], ["Sin", "text b", "2"], ["Sin", "text c", "Page 3 of 3"]]
    cleaned, removed = drop_repeated_margins(pages)
    assert cleaned == [["text a"], ["text b"], ["text c"]] and removed == 6


def test_embedded_image_cropped_at_150_dpi_or_more(tmp_path, en_scripts, clue_card):
    img = panel(clue_card, "autopsy")
    pdf = tmp_path / "Officer Li.pdf"
    pdf.write_bytes(text_pdf([(None, body_of(en_scripts["Officer Li"])[:800])], "en", images=[(0, png_bytes(img), 60)]))
    with pdfplumber.open(pdf) as plumber:
        (box,) = plumber.pages[0].images
        width_pt = box["x1"] - box["x0"]
    docs, _ = _read([pdf], tmp_path, "eng")
    (image,) = docs[0].images
    from PIL import Image

    crop = Image.open(io.BytesIO(image.png))
    assert crop.width / (width_pt / 72) >= 150
    assert "autopsy" in image.ocr_text.lower() or "cardiac" in image.ocr_text.lower()


def _huge_png_header(width: int = 20000, height: int = 20000) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 100)) + chunk(b"IEND", b"")


def test_bad_input_is_named_and_the_rest_is_ingested(tmp_path, zh_scripts):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    good = "张村民"
    (pkg / f"{good}.pdf").write_bytes(text_pdf([(None, zh_scripts[good])], "zh"))
    (pkg / "李警察.pdf").write_bytes(text_pdf([(None, zh_scripts["李警察"])], "zh")[:900])  # truncated
    (pkg / "empty.pdf").write_bytes(b"")
    (pkg / "notes.docx").write_bytes(b"PK\x03\x04 not really a docx")
    (pkg / "bomb.png").write_bytes(_huge_png_header())
    locked = FPDF()
    locked.add_font("wqy", fname=FONT)
    locked.set_font("wqy", size=12)
    locked.add_page()
    locked.cell(0, 10, "王村长 机密")
    locked.set_encryption(owner_password="owner", user_password="secret")
    (pkg / "王村长.pdf").write_bytes(bytes(locked.output()))
    blank = FPDF()
    for _ in range(500):
        blank.add_page()
    (pkg / "blank.pdf").write_bytes(bytes(blank.output()))

    prepared = prepare([pkg], IngestOptions("罪恶", "zh", workers=1))
    messages = prepared.summary.errors + prepared.summary.warnings + [str(p) for p in prepared.game.report]
    joined = "\n".join(messages)
    assert "empty.pdf" in joined and "0 bytes" in joined
    assert "notes.docx" in joined and "unsupported" in joined
    assert "bomb.png" in joined and "decompression bomb" in joined
    assert "王村长.pdf" in joined and "encrypted" in joined
    assert "李警察.pdf" in joined and ("corrupt" in joined or "cannot" in joined)
    assert "blank.pdf" in joined and "all 500 pages are blank" in joined
    assert [c.name for c in prepared.game.characters] == [good]
    assert cer(prepared.game.characters[0].script, zh_scripts[good]) <= 0.01


def test_zip_package_is_zip_slip_safe(tmp_path, en_scripts):
    archive = tmp_path / "package.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("Sin/Chief Wang.txt", en_scripts["Chief Wang"])
        zf.writestr("../../evil.txt", "escape")
        zf.writestr("/abs.txt", "escape")
    work = tmp_path / "work"
    work.mkdir()
    sources, problems = collect_sources([archive], work)
    assert [s.name for s in sources] == ["Sin/Chief Wang.txt"]
    assert sum("zip-slip" in p.message for p in problems) == 2
    assert not (tmp_path / "evil.txt").exists() and not Path("/abs.txt").exists()
    assert all(s.path.parent == work for s in sources)


def test_a_blank_package_creates_no_game(tmp_path, db):
    """500 blank pages and one blank image: a clear 'nothing to ingest' and no empty game (issue 13)."""
    from PIL import Image

    from annotate.models import Game
    from ingest.pipeline import IngestError, run_ingest

    pkg = tmp_path / "blank"
    pkg.mkdir()
    blank = FPDF()
    for _ in range(500):
        blank.add_page()
    (pkg / "blank.pdf").write_bytes(bytes(blank.output()))
    Image.new("RGB", (800, 600), "white").save(pkg / "card.png")
    try:
        run_ingest([pkg], IngestOptions("空白", "zh", workers=1))
    except IngestError as exc:
        assert "nothing to ingest" in str(exc) and "501 page(s)" in str(exc)
    else:
        raise AssertionError("a blank package was ingested")
    assert not Game.objects.exists()
