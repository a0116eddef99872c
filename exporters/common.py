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
