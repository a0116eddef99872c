"""Build realistic raw game packages at test time from the real anchor scripts (never committed).

- text-layer PDFs with fpdf2 and the wqy CJK font, with a running header and page numbers;
- scans: a PDF page rendered at 300 dpi, optionally with sensor noise and a 1–2° rotation, saved as
  an image-only PDF or an image file (a phone photo with an EXIF orientation tag, too);
- the character error rate used by the tests and the benchmark.
"""
from __future__ import annotations

import io
import json
import re
import unicodedata
from pathlib import Path

import numpy as np
from fpdf import FPDF
from PIL import Image
from rapidfuzz.distance import Levenshtein

FONT = "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"
ZH_GAME = "罪恶（4人封闭）"
EN_GAME = "Sin (4 people closed)"


def wellplay_scripts(wellplay_anchor: Path, language: str) -> dict[str, str]:
    """Role scripts (``script[0]``) of the Sin / 罪恶 characters, in cast order, literal ``\\n`` fixed."""
    folder = wellplay_anchor / ("chinese" if language == "zh" else "english") / (ZH_GAME if language == "zh" else EN_GAME)
    info = json.loads((folder / "json" / "script_info.json").read_text(encoding="utf-8"))
    out = {}
    for name in info["character_name"]:
        data = json.loads((folder / "json" / f"{name}.json").read_text(encoding="utf-8"))
        out[name] = data["script"][0].replace("\\n", "\n").strip()
    return out


def body_of(script: str) -> str:
    """The script without its first line (the character's name)."""
    return script.split("\n", 1)[1] if "\n" in script else script


class _Pdf(FPDF):
    def __init__(self, running_header: str = "") -> None:
        super().__init__(format="A4")
        self.running_header = running_header
        self.add_font("wqy", fname=FONT)
        self.set_auto_page_break(True, margin=22)
        self.set_margins(20, 20, 20)

    def header(self) -> None:
        if self.running_header:
            self.set_font("wqy", size=9)
            self.cell(0, 6, self.running_header, align="C")
            self.ln(10)

    def footer(self) -> None:
        if self.running_header:
            self.set_y(-15)
            self.set_font("wqy", size=9)
            self.cell(0, 8, f"- {self.page_no()} -", align="C")


def text_pdf(
    sections: list[tuple[str | None, str]],
    language: str,
    running_header: str = "",
    new_page_per_section: bool = True,
    images: list[tuple[int, bytes, float]] | None = None,
    font_size: float = 12,
) -> bytes:
    """A PDF with a text layer: each section is (heading line or None, text).

    ``images`` puts (section index, PNG/JPEG bytes, width mm) after that section's text.
    """
    pdf = _Pdf(running_header)
    wrap = "CHAR" if language == "zh" else "WORD"
    pdf.add_page()
    for i, (heading, text) in enumerate(sections):
        if i and new_page_per_section:
            pdf.add_page()
        if heading:
            pdf.set_font("wqy", size=font_size + 4)
            pdf.multi_cell(0, 10, heading, wrapmode=wrap, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("wqy", size=font_size)
        for para in text.split("\n"):
            pdf.multi_cell(0, font_size * 0.6, para, wrapmode=wrap, new_x="LMARGIN", new_y="NEXT")
        for index, data, width in images or []:
            if index == i:
                pdf.ln(4)
                pdf.image(io.BytesIO(data), w=width)
    return bytes(pdf.output())


def render_page(pdf_bytes: bytes, index: int = 0, dpi: int = 300) -> Image.Image:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(pdf_bytes)
    try:
        return pdf[index].render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
    finally:
        pdf.close()


def degrade(img: Image.Image, angle: float = 0.0, noise: float = 0.0, seed: int = 7) -> Image.Image:
    """A scanner's view: rotation (degrees), gaussian noise (sigma in grey levels) and specks."""
    out = img.convert("L")
    if angle:
        out = out.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    if noise:
        rng = np.random.default_rng(seed)
        arr = np.asarray(out, dtype=np.float32)
        arr = arr + rng.normal(0, noise, arr.shape)
        specks = rng.random(arr.shape) < 0.0008
        arr[specks] = 0
        out = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    return out


def image_pdf(images: list[Image.Image], dpi: int = 300) -> bytes:
    """A scanned PDF: one full-page image per page, no text layer."""
    buf = io.BytesIO()
    first, rest = images[0], images[1:]
    first.save(buf, "PDF", resolution=float(dpi), save_all=True, append_images=rest)
    return buf.getvalue()


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def phone_photo(img: Image.Image) -> bytes:
    """A JPEG stored sideways with EXIF orientation 6 (the camera says: rotate 90° clockwise)."""
    sideways = img.convert("RGB").rotate(90, expand=True)  # what the sensor wrote
    exif = Image.Exif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    sideways.save(buf, "JPEG", quality=92, exif=exif.tobytes())
    return buf.getvalue()


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "—": "-", "–": "-", "…": "..."}))
    return re.sub(r"\s+", "", text)


def cer(hypothesis: str, reference: str) -> float:
    """Character error rate: edit distance / reference length, after NFKC, quote folding and with
    all whitespace removed (line breaks and spaces are layout, not characters)."""
    ref = _norm(reference)
    return Levenshtein.distance(_norm(hypothesis), ref) / max(1, len(ref))


def first_chars(text: str, n: int) -> str:
    """The first ``n`` characters, ended at a line or sentence end when one is near."""
    if len(text) <= n:
        return text
    cut = text[:n]
    best = max(cut.rfind("。"), cut.rfind(". "), cut.rfind("\n"))
    return cut[: best + 1] if best > n * 0.6 else cut
