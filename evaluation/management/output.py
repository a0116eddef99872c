"""Bridges the Django-free CLI (which prints to file objects) to a command's output wrappers."""
from __future__ import annotations

from typing import Any


class PlainWriter:
    """Lets ``print(..., file=...)`` write through Django's OutputWrapper without extra newlines."""

    def __init__(self, wrapper: Any) -> None:
        self.wrapper = wrapper

    def write(self, text: str) -> None:
        self.wrapper.write(text, ending="")

    def flush(self) -> None:
        self.wrapper.flush()
