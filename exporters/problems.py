"""The problem log of a WellPlay read: every irregularity becomes a :class:`~casebook.interchange.Problem`
saying what was done, with the file named relative to the folder the user gave (so reports read
the same wherever the dataset lives)."""
from __future__ import annotations

from pathlib import Path

from casebook.interchange import Problem


class ProblemLog:
    """Collects problems with file paths relative to the root the user gave."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.items: list[Problem] = []

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix() or "."
        except ValueError:
            return path.as_posix()

    def add(
        self, path: Path, message: str, action: str = "", location: str = "", severity: str = "warning"
    ) -> None:
        self.items.append(
            Problem(file=self.rel(path), message=message, action=action, location=location, severity=severity)
        )
