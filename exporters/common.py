"""What every format reader returns, and helpers shared by readers and writers."""
from __future__ import annotations

from dataclasses import dataclass, field

from casebook.interchange import Game, Problem


@dataclass
class ReadResult:
    """Games read from a path, plus every problem met and what was done about it.

    Problems that belong to one game are also in that game's ``report``; ``problems`` holds all
    of them (and those that belong to no game, e.g. an unreadable folder).
    """

    games: list[Game] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def extend(self, other: ReadResult) -> None:
        self.games.extend(other.games)
        self.problems.extend(other.problems)


UTF8_BOM = b"\xef\xbb\xbf"
GBK = "GB18030/GBK"


def decode_text(data: bytes) -> tuple[str, str]:
    """The text of a file and the encoding it was read in: UTF-8 (with or without a BOM), else
    GB18030 (a superset of GBK, the other encoding Chinese game files come in). Raises the UTF-8
    attempt's UnicodeDecodeError when neither fits."""
    try:
        return data.decode("utf-8-sig"), "UTF-8 with BOM" if data.startswith(UTF8_BOM) else "UTF-8"
    except UnicodeDecodeError as not_utf8:
        try:
            return data.decode("gb18030"), GBK
        except UnicodeDecodeError:
            raise not_utf8 from None


def not_text(exc: UnicodeDecodeError) -> str:
    return f"neither UTF-8 nor {GBK} text (first bad byte at {exc.start})"
