"""WhodunitBench inline multiple-choice strings: ``<stem>？a. <opt> b. <opt> c. <opt> d. <opt>``.

The published strings are irregular (whodunitbench.md §3): ``a.X`` with no space, double spaces,
options glued to the previous text (``…一个密室。b. …``), option text that contains letters
(``d. a和b的所有物品``), 2- and 3-option questions, trailing spaces, and ``<n>.`` numbering on
some lists only (while Pu has a real stem starting ``0.38``). The parser therefore looks only for
the *next expected* letter, in order, after the stem's question mark.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["ParsedMCQ", "parse_inline_mcq", "render_inline_mcq", "strip_list_numbering", "OPTION_LETTERS"]

OPTION_LETTERS = "abcd"  # no upper case, no "e" and no full-width "．" occur in the published data
_QMARKS = "？?"
_NUMBER_PREFIX = re.compile(r"^\s*(\d+)\.")


@dataclass
class ParsedMCQ:
    """A question string split into its parts; ``problems`` says what was irregular.

    ``number_prefix`` is the ``"<n>."`` removed from the front when the caller said the string is
    item ``n`` of a numbered list (see :func:`strip_list_numbering`); otherwise ``None`` and the
    stem keeps whatever it starts with (``"0.38口径…"`` is a real stem).
    """

    stem: str
    options: list[str] = field(default_factory=list)
    number_prefix: str | None = None
    problems: list[str] = field(default_factory=list)


def _is_ascii_letter(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def _find_letter(text: str, letter: str, start: int) -> int:
    """Position of the next ``<letter>.`` at or after ``start`` that is not inside an ASCII word."""
    pos = start
    while True:
        pos = text.find(letter + ".", pos)
        if pos < 0:
            return -1
        if pos == 0 or not _is_ascii_letter(text[pos - 1]):
            return pos
        pos += 1


def _first_option_a(text: str) -> tuple[int, bool]:
    """Where option ``a.`` starts, and whether it follows the stem's question mark."""
    pos = 0
    while True:
        pos = _find_letter(text, "a", pos)
        if pos < 0:
            break
        before = text[:pos].rstrip()
        if before and before[-1] in _QMARKS:
            return pos, True
        pos += 1
    return _find_letter(text, "a", 0), False


def parse_inline_mcq(text: str, number: int | None = None) -> ParsedMCQ:
    """Split a published question string into stem and options (never raises).

    ``number``: the string is item ``number`` of a list numbered 1..N, so a leading
    ``"<number>."`` is numbering, not stem.
    """
    text = text or ""
    problems: list[str] = []
    number_prefix = None
    if number is not None:
        match = _NUMBER_PREFIX.match(text)
        if match and int(match.group(1)) == number:
            number_prefix = f"{number}."
            text = text[match.end():]
        else:
            problems.append(f"expected the numbering prefix {number}.")
    start, after_qmark = _first_option_a(text)
    if start < 0:
        stem = text.strip()
        if not any(q in text for q in _QMARKS):
            problems.append("no question mark and no option a.")
        else:
            problems.append("no option a. after the question mark")
        return ParsedMCQ(stem=stem, options=[], number_prefix=number_prefix, problems=problems)
    if not after_qmark:
        problems.append("option a. does not follow a question mark")
    stem = text[:start].strip()
    bounds = [start]
    cursor = start + 2
    for letter in OPTION_LETTERS[1:]:
        nxt = _find_letter(text, letter, cursor)
        if nxt < 0:
            break
        bounds.append(nxt)
        cursor = nxt + 2
    bounds.append(len(text))
    options = [text[bounds[i] + 2 : bounds[i + 1]].strip() for i in range(len(bounds) - 1)]
    if len(options) < 2:
        problems.append(f"only {len(options)} option found")
    if any(not o for o in options):
        problems.append("an option is empty")
    return ParsedMCQ(stem=stem, options=options, number_prefix=number_prefix, problems=problems)


def render_inline_mcq(stem: str, options: list[str]) -> str:
    """The published style: stem immediately followed by ``a. x b. y c. z d. w``."""
    parts = [f"{OPTION_LETTERS[i] if i < len(OPTION_LETTERS) else chr(ord('a') + i)}. {opt.strip()}"
             for i, opt in enumerate(options)]
    return stem.rstrip() + " ".join(parts)


def strip_list_numbering(items: list[str]) -> tuple[list[str], bool]:
    """Drop ``"<n>."`` prefixes only when the whole list is numbered 1..N in order.

    A blind ``^\\d+\\.`` strip would eat real stems such as ``"0.38口径转轮手枪…"``.
    """
    if not items:
        return list(items), False
    stripped: list[str] = []
    for i, item in enumerate(items, start=1):
        match = _NUMBER_PREFIX.match(item or "")
        if not match or int(match.group(1)) != i:
            return list(items), False
        stripped.append(item[match.end():])
    return stripped, True
