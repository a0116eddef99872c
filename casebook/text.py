"""Text helpers every app shares: the one definition of a CJK ideograph, and name keys.

Chinese games are first-class, so "is this Chinese?" must give the same answer everywhere: the
readers that detect a dataset's language, the cleaner that drops OCR spaces, token estimates,
distractor term overlap. Before this module six regexes with three different ranges disagreed
(only one covered Extension B, none covered Extension G, where rare surname characters live).
"""
from __future__ import annotations

import re
import unicodedata

# Every CJK ideograph block of Unicode 15.1, as the body of a regex character class:
# Extension A, the unified block, compatibility ideographs, and the supplementary planes
# (Extensions B–F and I, the compatibility supplement, Extensions G–H).
CJK = (
    "\u3400-\u4dbf"  # Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # Compatibility Ideographs
    "\U00020000-\U0002a6df"  # Extension B
    "\U0002a700-\U0002ebef"  # Extensions C, D, E, F
    "\U0002ebf0-\U0002ee5f"  # Extension I
    "\U0002f800-\U0002fa1f"  # Compatibility Ideographs Supplement
    "\U00030000-\U000323af"  # Extensions G, H
)
# Full-width and CJK punctuation a Chinese text uses between ideographs.
CJK_PUNCT = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\u2018\u2019\u201c\u201d\u2026\u2014\u00b7"

CJK_RE = re.compile(f"[{CJK}]")
CJK_RUN_RE = re.compile(f"[{CJK}]+")


def is_cjk(ch: str) -> bool:
    """True for one CJK ideograph (any block)."""
    return bool(CJK_RE.fullmatch(ch))


def has_cjk(text: str | None) -> bool:
    """True when the text holds at least one CJK ideograph."""
    return bool(CJK_RE.search(text or ""))


def cjk_count(text: str | None) -> int:
    """How many CJK ideographs the text holds (a Chinese character weighs about an English word)."""
    return len(CJK_RE.findall(text or ""))


# --------------------------------------------------------------------------------------------
# Name keys

MIDDLE_DOTS = "\u00b7\u2022\u30fb\uff65\u2027\u22c5"


def name_key(name: str) -> str:
    """The key two names are compared by: NFKC, middle-dot variants folded, spaces and case dropped.

    WellPlay and WhodunitBench write the same name with U+00B7, U+2022, U+30FB or U+FF65.
    """
    text = unicodedata.normalize("NFKC", name or "")
    for dot in MIDDLE_DOTS:
        text = text.replace(dot, "\u00b7")
    return "".join(text.split()).casefold()


def compact_key(text: str | None) -> str:
    """Whitespace dropped and case folded: how two answers are compared for "the same text"."""
    return "".join((text or "").split()).casefold()
