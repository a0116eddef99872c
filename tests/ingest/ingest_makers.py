"""Build realistic raw game packages at test time from the real anchor scripts (never committed).

- text-layer PDFs with fpdf2 and the wqy CJK font, with a running header and page numbers;
- scans: a PDF page rendered at 300 dpi, optionally with sensor noise and a 1–2° rotation, saved as
  an image-only PDF or an image file (a phone photo with an EXIF orientation tag, too);
- the character error rate used by the tests and the benchmark.
"""
from __future__ import annotations

import io
import json
import logging
import re
import unicodedata
from pathlib import Path

import numpy as np
from fpdf import FPDF
from PIL import Image
from rapidfuzz.distance import Levenshtein

# fpdf2 subsets the CJK font with fontTools, which warns once per dropped bitmap table ("BDF NOT
# subset") — hundreds of lines per package that say nothing about the test.
logging.getLogger("fontTools.subset").setLevel(logging.ERROR)

FONT = "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"
ZH_GAME = "罪恶（4人封闭）"
EN_GAME = "Sin (4 people closed)"


def wellplay_scripts(wellplay_anchor: Path, language: str, game: str = "") -> dict[str, str]:
    """Role scripts (``script[0]``) of one game's characters (default Sin / 罪恶), in cast order,
    literal ``\\n`` fixed. ``game`` is the folder name in that language."""
    game = game or (ZH_GAME if language == "zh" else EN_GAME)
    folder = wellplay_anchor / ("chinese" if language == "zh" else "english") / game
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


# -- dense Chinese pages (issue 21): paragraphs, full-width punctuation, digits, Latin inside Chinese --

ZH_GAMES = {"罪恶（4人封闭）": "Sin (4 people closed)", "致命喷泉（4人封闭）": "Deadly Fountain (4 people closed)"}
DENSE_FONT_PT = 10.5  # 五号, the usual body size of a printed Chinese script: ~44 px glyphs at 300 dpi


def cast_line(wellplay_anchor: Path, game: str) -> str:
    """``角色：何老六（He Laoliu）、慕北（Mu Bei）…``: the Chinese cast glossed with the published
    English names (both games list their cast in the same order in both languages)."""
    zh = json.loads((wellplay_anchor / "chinese" / game / "json" / "script_info.json").read_text(encoding="utf-8"))
    en = json.loads((wellplay_anchor / "english" / ZH_GAMES[game] / "json" / "script_info.json").read_text(encoding="utf-8"))
    pairs = zip(zh["character_name"], en["character_name"], strict=True)
    return "角色：" + "、".join(f"{z}（{e}）" for z, e in pairs) + "。"


def quiz_blocks(wellplay_anchor: Path, game: str) -> list[str]:
    """The game's published questions (``final_result/GM.csv``) typeset as a quiz: ``第3题：…？``
    then ``A. … B. …`` — digits, times and the English relation labels inside Chinese."""
    import csv

    path = wellplay_anchor / "chinese" / game / "final_result" / "GM.csv"
    with open(path, encoding="utf-8-sig", newline="") as fh:
        rows = [row for row in csv.DictReader(fh) if (row.get("question") or "").strip()]
    blocks = []
    for number, row in enumerate(rows, start=1):
        options = [f"{letter.upper()}. {row[letter].strip()}" for letter in "abcde" if (row.get(letter) or "").strip()]
        blocks.append(f"第{number}题：{row['question'].strip()}\n" + "  ".join(options))
    return blocks


def dense_zh_pages(wellplay_anchor: Path, game: str, count: int, chars: int = 1150) -> list[str]:
    """``count`` page texts of ~``chars`` characters: a cast line, role-script paragraphs (in cast
    order, then on through the game) and every page ending with three quiz questions.

    Meant to be typeset with ``text_pdf(..., font_size=DENSE_FONT_PT)``: one A4 page each.
    """
    paragraphs = [p.strip() for script in wellplay_scripts(wellplay_anchor, "zh", game).values()
                  for p in script.split("\n") if p.strip()]
    quiz = quiz_blocks(wellplay_anchor, game)
    cast = cast_line(wellplay_anchor, game)
    pages, p, q = [], 0, 0
    for _ in range(count):
        questions = [quiz[(q + i) % len(quiz)] for i in range(3)]
        q += 3
        budget = chars - len(cast) - sum(len(x) for x in questions)
        body: list[str] = []
        while budget > 80:
            para = paragraphs[p % len(paragraphs)]
            p += 1
            body.append(first_chars(para, budget) if len(para) > budget else para)
            budget -= len(body[-1])
        pages.append("\n".join([cast, *body, *questions]))
    return pages


ERROR_CLASSES = ("width", "punctuation", "digit", "latin", "cjk_substitution", "insertion", "deletion", "space_break")


def strict_cer(hypothesis: str, reference: str) -> float:
    """Like :func:`cer` but width-sensitive: ``，`` for ``,`` counts (no NFKC, no quote folding)."""
    ref = re.sub(r"\s+", "", unicodedata.normalize("NFC", reference))
    return Levenshtein.distance(re.sub(r"\s+", "", unicodedata.normalize("NFC", hypothesis)), ref) / max(1, len(ref))


def _kind(ch: str) -> str:
    if ch.isspace():
        return "space"
    if ch.isdigit():
        return "digit"
    if ch.isascii() and ch.isalpha():
        return "latin"
    if unicodedata.category(ch).startswith(("P", "S")):
        return "punct"
    return "cjk"


def error_classes(hypothesis: str, reference: str) -> dict[str, int]:
    """Edit operations of a width-sensitive alignment, counted by class (see ``ERROR_CLASSES``).

    Whitespace runs are collapsed to one character (a line break stays a line break), so a space
    inside a Chinese sentence, a lost paragraph break or a line broken mid-sentence shows as
    ``space_break`` while the other classes count characters. First match wins: whitespace, then
    same-after-NFKC (full/half width), punctuation, digits, Latin letters, then CJK substitutions,
    insertions and deletions.
    """
    def squeeze(text: str) -> str:
        text = unicodedata.normalize("NFC", text).strip()
        return re.sub(r"\s+", lambda m: "\n" if "\n" in m.group() else " ", text)

    hyp, ref = squeeze(hypothesis), squeeze(reference)
    counts = dict.fromkeys(ERROR_CLASSES, 0)
    for op in Levenshtein.editops(hyp, ref):
        h = hyp[op.src_pos] if op.tag != "insert" else ""  # "insert": a reference character the OCR missed
        r = ref[op.dest_pos] if op.tag != "delete" else ""
        kinds = {_kind(c) for c in (h, r) if c}
        if "space" in kinds:
            counts["space_break"] += 1
        elif h and r and unicodedata.normalize("NFKC", h) == unicodedata.normalize("NFKC", r):
            counts["width"] += 1
        elif "punct" in kinds:
            counts["punctuation"] += 1
        elif "digit" in kinds:
            counts["digit"] += 1
        elif "latin" in kinds:
            counts["latin"] += 1
        elif op.tag == "replace":
            counts["cjk_substitution"] += 1
        elif op.tag == "delete":
            counts["insertion"] += 1  # a character the OCR added
        else:
            counts["deletion"] += 1  # a character the OCR lost
    return counts


def scanned_package(scripts: dict[str, str], characters: int, pages_each: int, chars_per_page: int = 500,
                    dpi: int = 200, language: str = "en") -> dict[str, bytes]:
    """``<character>.pdf`` files of full-page scans (no text layer) of the real role scripts.

    A script shorter than the pages asked for starts again from its beginning (no blank pages)."""
    files = {}
    for name in list(scripts)[:characters]:
        source = scripts[name]
        while len(source) < chars_per_page * pages_each:
            source += "\n" + scripts[name]
        text = first_chars(source, chars_per_page * pages_each)
        parts = [text[i * chars_per_page:(i + 1) * chars_per_page] for i in range(pages_each)]
        images = [render_page(text_pdf([(None, part)], language), dpi=dpi) for part in parts]
        files[f"{name}.pdf"] = image_pdf(images, dpi=dpi)
    return files
