"""Stage 2, clean: make read text look like what the author typed.

Unicode NFC; the spaces OCR (and the published WhodunitBench text) put between CJK characters
removed; punctuation widths normalised (full-width in Chinese, ASCII in English, a bracket pair
around a Latin gloss in Chinese full-width on both sides); lines broken
by the page width joined back into paragraphs; English words hyphenated at a line end joined.
Every function is idempotent, so text can be cleaned again after the split editor changes.

Measured on dense Chinese scans (``benchmarks/ocr_quality.py``, 8 pages of two games): brackets
around Latin glosses taking the full width took the width-sensitive CER from 2.53 % to 1.79 %
(full/half-width errors 0.38 → 0.02 per 100 characters, other punctuation 0.80 → 0.42), and
measuring line widths without OCR's spaces (``usual_width``) joined the wrapped lines again
(space and line-break artefacts 3.74 → 1.88 per 100 characters). A character confusion list learned from one game's scan/text
pairs was not kept: applied to the other game it raised CER from 1.77 % to 4.31 % (and 1.48 % to
11.74 % the other way round); with one character of context on each side it changed nothing on
the held-out game; only on the pages it was learned from did it "help" (0.59 %), which is overfitting.
"""
from __future__ import annotations

import re
import unicodedata

from casebook.text import CJK, CJK_PUNCT, CJK_RE, cjk_count

# Spaces next to a CJK character or full-width punctuation, on one line.
_CJK_SPACE = re.compile(f"(?<=[{CJK}{CJK_PUNCT}])[ \t\u3000\u00a0]+(?=[{CJK}{CJK_PUNCT}0-9A-Za-z])"
                        f"|(?<=[0-9A-Za-z])[ \t\u3000\u00a0]+(?=[{CJK}{CJK_PUNCT}])"
                        f"|(?<=[{CJK}])[ \t\u3000\u00a0]+(?=[,.;:!?()])"
                        f"|(?<=[)\\]])[ \t\u3000\u00a0]+(?=[{CJK}{CJK_PUNCT}])")
_ZH_TO_FULL = {",": "\uff0c", ";": "\uff1b", ":": "\uff1a", "?": "\uff1f", "!": "\uff01", "(": "\uff08", ")": "\uff09"}
_ASCII_NEAR_CJK = re.compile(f"(?<=[{CJK}{CJK_PUNCT}])[,;:?!()]|[,;:?!()](?=[{CJK}{CJK_PUNCT}])")
# A bracket pair read half full-width, half ASCII (``（Zhang Villager)``): one width, the full one.
_MIXED_PAIR = re.compile("\uff08([^()\uff08\uff09\n]*)\\)|\\(([^()\uff08\uff09\n]*)\uff09")
_PERIOD_AFTER_CJK = re.compile(f"(?<=[{CJK}])\\.(?=$|[{CJK}{CJK_PUNCT}\\s])", re.MULTILINE)
_EN_FROM_FULL = {
    "\uff0c": ",", "\uff1b": ";", "\uff1a": ":", "\uff1f": "?", "\uff01": "!", "\uff08": "(", "\uff09": ")",
    "\u3002": ".", "\u3001": ",", "\u3000": " ",
}
SENTENCE_END_ZH = "。！？!?…；;：:”’」』）)】"
SENTENCE_END_EN = ".!?:;\"')]”’…"
FULL_LINE = 0.8  # a line at least this share of the text's usual full width was wrapped by the page
MIN_WRAP_WIDTH = 30  # display columns; shorter "usual widths" are lists or headings, never wrapped prose


def is_cjk_text(text: str) -> bool:
    """True when CJK characters make up a fair share of the letters (the text is Chinese)."""
    cjk = cjk_count(text)
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return cjk > 0 and cjk * 2 >= latin * 0.3


def display_width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def normalise_unicode(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00ad", "")
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf"))


def remove_cjk_spaces(text: str) -> str:
    """Drop spaces OCR inserts inside CJK runs and between CJK and digits/Latin letters."""
    return _CJK_SPACE.sub("", text)


def punctuation_zh(text: str) -> str:
    """ASCII punctuation touching Chinese characters becomes full-width; straight quotes pair up."""
    text = _ASCII_NEAR_CJK.sub(lambda m: _ZH_TO_FULL[m.group()], text)
    text = _PERIOD_AFTER_CJK.sub("\u3002", text)
    text = _MIXED_PAIR.sub(lambda m: "\uff08" + (m.group(1) or m.group(2) or "").strip() + "\uff09", text)
    out_lines = []
    for line in text.split("\n"):
        if '"' in line and CJK_RE.search(line):
            parts = line.split('"')
            line = parts[0] + "".join(("\u201c" if i % 2 else "\u201d") + p for i, p in enumerate(parts[1:], start=1))
        out_lines.append(line)
    return "\n".join(out_lines)


def punctuation_en(text: str) -> str:
    """Full-width punctuation in English text becomes ASCII."""
    return "".join(_EN_FROM_FULL.get(ch, ch) for ch in text)


def usual_width(text: str) -> int:
    """The 90th-percentile line width (display columns): the text width of the page layout.

    Compute it over a whole document (see ``pipeline.clean_documents``) so that a page of short
    lines (a cast list, a title page) is not mistaken for wrapped prose. Widths are measured as
    the cleaned lines will be, without the spaces OCR puts between CJK characters: on raw
    ``chi_sim`` output those made every line ~1.5x wider, so no wrapped Chinese line was ever
    "full" and dense OCR'd pages kept every page-width line break.
    """
    widths = sorted(display_width(remove_cjk_spaces(line.strip())) for line in text.split("\n") if line.strip())
    if len(widths) < 3:
        return 0
    width = widths[int(0.9 * (len(widths) - 1))]
    return width if width >= MIN_WRAP_WIDTH else 0


def join_broken_lines(text: str, chinese: bool, full_width: int | None = None) -> str:
    """Join lines the page width broke; keep headings, blank-line paragraphs and short lines.

    A line is joined to the next when it does not end a sentence and either it is "full" (at
    least ``FULL_LINE`` of the 90th-percentile width, i.e. wrapped by the margin) or, in English,
    the next line starts in lower case. English ``word-`` + lower-case start is de-hyphenated.
    """
    lines = [line.rstrip() for line in text.split("\n")]
    full = (usual_width(text) if full_width is None else full_width) * FULL_LINE
    out: list[str] = []
    for line in lines:
        stripped = line.strip()
        if out and out[-1].strip() and stripped:
            prev = out[-1]
            ends = SENTENCE_END_ZH if chinese else SENTENCE_END_EN
            wrapped = full > 0 and display_width(prev) >= full
            if chinese:
                if prev[-1] not in ends and (wrapped or stripped[0] in "，。、；：！？）」』”"):
                    joiner = "" if (CJK_RE.match(stripped[0]) or not stripped[0].isascii()) else " "
                    if prev[-1].isascii() and stripped[0].isascii() and prev[-1].isalnum() and stripped[0].isalnum():
                        joiner = " "
                    out[-1] = prev + joiner + stripped
                    continue
            else:
                lower_next = stripped[0].islower()
                if prev.endswith("-") and len(prev) > 1 and prev[-2].isalpha() and lower_next:
                    out[-1] = prev[:-1] + stripped
                    continue
                if prev[-1] not in ends and (wrapped or lower_next):
                    out[-1] = prev + " " + stripped
                    continue
        out.append(stripped if not line[:1].isspace() else line.strip())
    return "\n".join(out)


def collapse_blank_lines(text: str) -> str:
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return re.sub(r"(?<=\S)[ \t]{2,}", " ", text).strip("\n")


def clean_text(text: str, language: str, full_width: int | None = None) -> str:
    """The whole cleaning stage for one page or section of text.

    ``full_width`` is the document's usual line width (:func:`usual_width`); by default the text's own.
    """
    text = normalise_unicode(text)
    chinese = language == "zh"
    if chinese:
        text = remove_cjk_spaces(punctuation_zh(remove_cjk_spaces(text)))
    else:
        text = punctuation_en(text)
    text = join_broken_lines(text, chinese, full_width)
    return collapse_blank_lines(text)


def continues_on_next_page(previous: str, following: str, language: str) -> bool:
    """Whether a page break fell inside a sentence (join without a paragraph break)."""
    prev = previous.rstrip()
    nxt = following.lstrip()
    if not prev or not nxt:
        return False
    if language == "zh":
        return prev[-1] not in SENTENCE_END_ZH and bool(CJK_RE.match(nxt[0]) or nxt[0] in "，。、；")
    return prev[-1] not in SENTENCE_END_EN and (nxt[0].islower() or prev.endswith("-"))


def join_pages(pieces: list[str], language: str) -> str:
    """Concatenate page texts of one section; a sentence cut by a page break is joined back."""
    out = ""
    for piece in pieces:
        piece = piece.strip("\n")
        if not piece:
            continue
        if not out:
            out = piece
        elif continues_on_next_page(out, piece, language):
            if language != "zh" and out.endswith("-") and out[-2:-1].isalpha():
                out = out[:-1] + piece
            else:
                out = out + ("" if language == "zh" else " ") + piece
        else:
            out = out + "\n" + piece
    return out
