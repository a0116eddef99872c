"""Scoring multiple-choice answers and aggregating them over categories, games, characters and runs.

Two scoring modes are reported side by side, never mixed (``summary.json`` → ``scoring``):

* **repository** (alias ``compatible``) — the WellPlay repository's own extraction, matching and
  aggregation (:mod:`evaluation.repository`, ``shared/formats/wellplay.md`` §7), quirks included,
  so the figures can be put next to the papers' tables. Aggregation: *per file* (one game × one
  run) the weighted score and each category's accuracy, then the mean over files.
* **strict** — the reply read by :func:`evaluation.parsing.parse_answer` (JSON ``answer`` field or
  an unambiguous option letter) must give exactly the truth's letter set. Aggregation: pooled over
  every game of a run, then mean ± sample std over runs.

Failed requests (no reply: context, auth, server, timeout) are never scored: they are left out of
every accuracy and counted apart. Unparseable replies are scored (wrong).
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluation.repository import is_right_repository, repository_answer

__all__ = [
    "AGGREGATION", "MODES", "MODE_ALIASES", "ResultRow", "Stat", "aggregate", "canonical_mode",
    "is_right_strict", "mean_std", "outcome_counts", "score_reply",
]

MODES = ("strict", "repository")
MODE_ALIASES = {"compatible": "repository"}
AGGREGATION = {
    "strict": "pooled over the games of each run; mean ± sample std over runs",
    "repository": "per file (game × run): weighted score Σ weight·right / Σ weight (10/5/2) and per-category "
                  "accuracy; then the mean over files (WellPlay save_all_evaluate)",
}


def canonical_mode(name: str) -> str:
    """``compatible`` (the old name) means ``repository``."""
    return MODE_ALIASES.get(name, name)


def is_right_strict(letters: str | None, truth: str) -> bool:
    """Exact letter-set equality; unparseable answers and empty truths are wrong.

    Truth ``bb`` is the set {b}. Truth ``ac`` needs both ``a`` and ``c``. For the two-suspect
    questions, whose published truth is the single culprit letter, only answering exactly that
    letter is right — a model that names two people as asked scores 0 here but may score in
    *repository* mode; the difference between the two modes shows that effect.
    """
    truth_set = {ch for ch in (truth or "").strip().lower() if ch.isalpha()}
    if letters is None or not truth_set:
        return False
    return set(letters.lower()) == truth_set


def score_reply(reply: str, letters: str | None, truth: str, multi: bool) -> dict[str, float]:
    """Both modes for one received reply (``letters`` from the strict parser)."""
    return {
        "strict": float(is_right_strict(letters, truth)),
        "repository": float(is_right_repository(repository_answer(reply), truth, multi)),
    }


@dataclass
class ResultRow:
    """One question asked in one run, and how it scored."""

    run: int
    game: str
    question_id: str
    category: str  # objective / reasoning / relations; lsu / tiu / miu / mmr / cmd
    weight: float
    truth: str
    character: str = ""
    sub_type: str = ""
    multi: bool = False
    level: int | None = None
    reply: str | None = ""
    answer: str | None = None  # parsed letters (None = unparseable / failed)
    answer_raw: str = ""
    right: dict[str, float] = field(default_factory=dict)  # mode -> 0/1 (or a 0..1 judge score)
    cached: bool = False
    error: str = ""
    status: str = "answered"  # answered / unparseable / failed (failed rows are never scored)
    failure: str = ""  # context / auth / server / timeout / judge … when status is failed
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Stat:
    mean: float | None
    std: float | None
    n: int  # questions per run (the denominator)
    runs: list[float | None] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "std": self.std, "n": self.n, "runs": self.runs}


def mean_std(values: Sequence[float | None]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (0 for one run) of the non-None values."""
    vals = [v for v in values if v is not None and not math.isnan(v)]
    if not vals:
        return None, None
    mean = statistics.fmean(vals)
    std = statistics.stdev(vals) if len(vals) > 1 else 0.0
    return mean, std


def _accuracy(rows: Iterable[ResultRow], mode: str) -> float | None:
    rows = [r for r in rows if mode in r.right]  # a mode a row has no score in (factual rows: informed)
    return sum(r.right.get(mode, 0.0) for r in rows) / len(rows) if rows else None


def _weighted(rows: Iterable[ResultRow], mode: str) -> float | None:
    rows = [r for r in rows if mode in r.right]
    total = sum(r.weight for r in rows)
    return sum(r.weight * r.right.get(mode, 0.0) for r in rows) / total if total else None


def _per_run(rows: Sequence[ResultRow], runs: Sequence[int], fn: Callable[[list[ResultRow]], float | None]) -> Stat:
    by_run: dict[int, list[ResultRow]] = defaultdict(list)
    for r in rows:
        by_run[r.run].append(r)
    values = [fn(by_run.get(run, [])) for run in runs]
    mean, std = mean_std(values)
    n = len(by_run[runs[0]]) if runs and by_run.get(runs[0]) else 0
    return Stat(mean, std, n, values)


def _per_file(rows: Sequence[ResultRow], runs: Sequence[int], fn: Callable[[list[ResultRow]], float | None]) -> Stat:
    """The repository's aggregation: ``fn`` per file (game × run), the mean over files of each run's
    games per run (``runs``), and the overall mean/std over all files (files without rows of the
    subset are skipped, as pandas' ``mean`` skips NaN)."""
    by_file: dict[tuple[str, int], list[ResultRow]] = defaultdict(list)
    for r in rows:
        by_file[(r.game, r.run)].append(r)
    file_values = {key: fn(rs) for key, rs in by_file.items()}
    mean, std = mean_std(list(file_values.values()))
    per_run = [mean_std([v for (_, run), v in file_values.items() if run == wanted])[0] for wanted in runs]
    n = sum(1 for r in rows if r.run == runs[0]) if runs else 0
    return Stat(mean, std, n, per_run)


def _stat(mode: str) -> Callable[..., Stat]:
    return _per_file if canonical_mode(mode) == "repository" else _per_run


def _block(rows: Sequence[ResultRow], runs: Sequence[int], categories: Sequence[str],
           modes: Sequence[str]) -> dict[str, Any]:
    """by_category + overall for a set of rows (one game, one character, or everything)."""
    by_category: dict[str, Any] = {}
    for cat in categories:
        cat_rows = [r for r in rows if r.category == cat]
        if not cat_rows:
            continue
        stats = {m: _stat(m)(cat_rows, runs, lambda rs, m=m: _accuracy(rs, m)) for m in modes}
        by_category[cat] = {m: stats[m].mean for m in modes}
        by_category[cat]["std"] = {m: stats[m].std for m in modes}
        by_category[cat]["n"] = stats[modes[0]].n
    overall: dict[str, Any] = {}
    for m in modes:
        acc = _stat(m)(rows, runs, lambda rs, m=m: _accuracy(rs, m))
        wtd = _stat(m)(rows, runs, lambda rs, m=m: _weighted(rs, m))
        overall[m] = {
            "accuracy": acc.mean, "accuracy_std": acc.std,
            "weighted": wtd.mean, "weighted_std": wtd.std,
            "accuracy_runs": acc.runs, "weighted_runs": wtd.runs,
        }
    overall["n"] = _per_run(rows, runs, lambda rs: 0.0).n
    return {"by_category": by_category, "overall": overall}


def outcome_counts(rows: Sequence[ResultRow]) -> dict[str, Any]:
    """answered / unparseable / failed (by reason) over every asked row."""
    failed: dict[str, int] = defaultdict(int)
    for r in rows:
        if r.status == "failed":
            failed[r.failure or "other"] += 1
    return {
        "answered": sum(1 for r in rows if r.status == "answered"),
        "unparseable": sum(1 for r in rows if r.status == "unparseable"),
        "failed": sum(failed.values()),
        "failed_by_reason": dict(sorted(failed.items())),
    }


def aggregate(rows: Sequence[ResultRow], runs: int, categories: Sequence[str],
              modes: Sequence[str] = MODES) -> dict[str, Any]:
    """The core of ``summary.json``: by_category, overall, by_game, by_character, outcomes, scoring."""
    run_ids = list(range(runs))
    scored = [r for r in rows if r.right and r.status != "failed"]  # failures and unjudged rows left out
    out = _block(scored, run_ids, categories, modes)
    out["by_game"] = {}
    for game in sorted({r.game for r in scored}):
        out["by_game"][game] = _block([r for r in scored if r.game == game], run_ids, categories, modes)
    by_character: dict[str, Any] = {}
    for game, character in sorted({(r.game, r.character) for r in scored if r.character}):
        rs = [r for r in scored if r.game == game and r.character == character]
        by_character.setdefault(game, {})[character] = _block(rs, run_ids, categories, modes)
    out["by_character"] = by_character
    out["runs"] = runs
    out["outcomes"] = outcome_counts(rows)
    out["scoring"] = {m: {"aggregation": AGGREGATION.get(canonical_mode(m), AGGREGATION["strict"]),
                          **({"aliases": [a for a, c in MODE_ALIASES.items() if c == m]} if m in MODE_ALIASES.values()
                             else {})}
                      for m in modes}
    return out
