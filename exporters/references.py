"""Stable ids for a game's scripts and clues, shared by every table-like export.

The Casebook document, the Hugging Face tables and the generic JSONL/CSV question files all name a
script or a clue the same way, so a question row can point at the texts it is answered from and
the reader joins them without a database: ``<game>/script/<character>``, ``<game>/clue/<key>``.
"""
from __future__ import annotations

from casebook import interchange as ix


def script_id(game: str, character: str) -> str:
    return f"{game}/script/{character}"


def clue_id(game: str, key: str) -> str:
    return f"{game}/clue/{key}"


def question_id(game: str, index: int) -> str:
    return f"{game}#{index}"


def context_ids(game: ix.Game) -> tuple[list[str], list[str]]:
    """The scripts (playable characters with a script) and clues a question of ``game`` is asked over."""
    scripts = [script_id(game.slug, c.name) for c in game.characters if c.script]
    clues = [clue_id(game.slug, c.key) for c in game.clues]
    return scripts, clues


def evidence_ids(game: str, spans: list[ix.Span]) -> tuple[list[str], list[str]]:
    """The scripts and clues a question's evidence quotes, in first-cited order."""
    scripts: dict[str, None] = {}
    clues: dict[str, None] = {}
    for span in spans:
        if span.document in (ix.SpanDocument.SCRIPT, ix.SpanDocument.GOALS) and span.owner:
            scripts[script_id(game, span.owner)] = None
        elif span.document == ix.SpanDocument.CLUE and span.owner:
            clues[clue_id(game, span.owner)] = None
    return list(scripts), list(clues)
