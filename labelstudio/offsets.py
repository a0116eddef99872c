"""Check and repair Label Studio text offsets against the text Casebook stores.

Label Studio's text regions carry ``start``/``end`` and the selected ``text``. Depending on the
frontend version and feature flags the offsets count code points (what Casebook uses) or UTF-16
code units (what JavaScript counts: 𠮷 U+20BB7 counts 2), and older versions drift after "\\r\\n".
(Label Studio 1.23.2's editor records code points: checked by tests/labelstudio/test_ui_offsets.py,
which selects text after 𠮷 with the mouse.) So an offset is never trusted on its own: ``text[start:end]`` must equal the quote. If not, the
UTF-16 reading is tried, then the quote is searched nearest to the given offset; if the quote is
not in the text at all the region is reported, not guessed.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotate.services.spans import SpanError, utf16_to_codepoint


class OffsetError(ValueError):
    """The region cannot be placed in the stored text; the message says why."""


@dataclass(frozen=True)
class Placed:
    start: int
    end: int
    quote: str
    how: str  # "exact", "utf16", "searched", "offsets-only"


def place(text: str, start: int | None, end: int | None, quote: str | None) -> Placed:
    """Code-point offsets of a region whose quote is ``quote`` (see the module docstring)."""
    if not isinstance(start, int) or not isinstance(end, int):
        start = end = None
    if not quote:
        if start is not None and end is not None and 0 <= start < end <= len(text):
            return Placed(start, end, text[start:end], "offsets-only")
        raise OffsetError(f"region [{start}:{end}] has no quoted text and its offsets are outside the text "
                          f"({len(text)} characters)")
    if start is not None and end is not None:
        if 0 <= start <= end <= len(text) and text[start:end] == quote:
            return Placed(start, end, quote, "exact")
        try:
            s16, e16 = utf16_to_codepoint(text, start), utf16_to_codepoint(text, end)
        except SpanError:
            s16 = e16 = -1
        if s16 >= 0 and text[s16:e16] == quote:
            return Placed(s16, e16, quote, "utf16")
    hits = []
    at = text.find(quote)
    while at >= 0:
        hits.append(at)
        at = text.find(quote, at + 1)
    if not hits:
        short = quote if len(quote) <= 40 else quote[:37] + "..."
        raise OffsetError(f"the quoted text {short!r} does not occur in the stored text "
                          "(was the text edited after the push?)")
    anchor = start if start is not None else 0
    best = min(hits, key=lambda h: (abs(h - anchor), h))
    return Placed(best, best + len(quote), quote, "searched")
