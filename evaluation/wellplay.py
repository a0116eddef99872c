"""WellPlay evaluation: every character's questions, one question per request, scored two ways.

Each question of a character file is asked from the chosen perspective (``own`` script, ``all``
scripts, ``none``); the number of rows equals the paper's per-game count (the aggregate
GM.csv/FSA.csv is the same rows concatenated, so it is not asked again). Scoring and aggregation
are in :mod:`evaluation.scoring`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from casebook.interchange import WELLPLAY_KINDS, Game
from evaluation.config import ConfigError, EvalConfig
from evaluation.context import fit_to_context, token_counter
from evaluation.engine import Item, ask, score_items
from evaluation.prompts import build_messages, context_for
from evaluation.scoring import ResultRow, aggregate

__all__ = ["CATEGORIES", "build_items", "load_games", "run_wellplay"]

CATEGORIES = ("objective", "reasoning", "relations")
BASELINE_CONTEXT_BUDGET = 10**9  # the lexical baseline reads the whole perspective, no truncation


def load_games(config: EvalConfig) -> tuple[list[Game], list[str]]:
    """Games of the export (filtered by --language / --game) and the reader's problem lines."""
    from exporters.wellplay.reader import read_wellplay

    result = read_wellplay(config.export_dir)
    games = [g for g in result.games if config.language is None or g.language == config.language]
    if config.games:
        wanted = {g.casefold() for g in config.games}
        games = [g for g in games if g.slug.casefold() in wanted or g.title.casefold() in wanted]
        if not games:
            known = ", ".join(sorted(g.slug for g in result.games)) or "none"
            raise ConfigError(f"no game matches --game {' '.join(config.games)}; games in the export: {known}")
    if not games:
        raise ConfigError(f"no WellPlay games found in {config.export_dir}"
                          + (f" for --language {config.language}" if config.language else ""))
    problems = [str(p) for p in result.problems if p.severity == "error"]
    return games, problems


def build_items(games: Sequence[Game], config: EvalConfig) -> list[Item]:
    items: list[Item] = []
    for game in games:
        counts: dict[str, int] = {}
        for index, question in enumerate(game.questions):
            if question.kind not in WELLPLAY_KINDS or not question.options:
                continue
            counts[question.kind] = counts.get(question.kind, 0) + 1
            if config.limit is not None and counts[question.kind] > config.limit:
                continue
            messages, note = [], ""
            if not config.is_baseline:
                messages, note = fit_to_context(
                    lambda budget, game=game, question=question: build_messages(game, question, config.perspective,
                                                                                budget),
                    config.token_budget, config.prompt_limit(), token_counter(config.model)[0])
            context = ""
            if config.model == "baseline:lexical":
                context = context_for(game, question, config.perspective, BASELINE_CONTEXT_BUDGET).text
                context = context or question.stem
            items.append(Item(
                id=f"{game.slug}#{index}", game=game, question=question, category=str(question.kind),
                messages=messages, context=context, character=question.perspective,
                extra={"context_note": note} if note else {},
            ))
    return items


def run_wellplay(config: EvalConfig, client: Any) -> tuple[dict[str, Any], list[ResultRow], str]:
    """Ask, score and aggregate; returns (summary core, per-question rows, extra Markdown)."""
    games, problems = load_games(config)
    items = build_items(games, config)
    if not items:
        raise ConfigError("the selected games have no multiple-choice questions")
    answers = ask(items, config, client, desc="WellPlay questions")
    rows = score_items(answers)
    summary = aggregate(rows, config.runs, CATEGORIES)
    summary["questions"] = len(items)
    summary["games"] = [{"slug": g.slug, "title": g.title, "language": g.language} for g in games]
    extra = ""
    if problems:
        extra = "## Reader problems\n\n" + "\n".join(f"- {p}" for p in problems)
    return summary, rows, extra
