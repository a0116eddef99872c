"""Scoring multiple-choice answers and aggregating them over categories, games, characters and runs.

Two rule sets are reported side by side:

* **compatible** — the rules of the WellPlay repository code (``Game_Framework.py``, see
  ``shared/formats/wellplay.md`` §7), quirks included, so numbers are comparable with the papers:
  the answer string and the truth are lowercased and compared as *substrings*.
* **strict** — the chosen letter set must equal the truth letter set.

Aggregates follow the repository too: per run, the accuracy of each category (plain means), the
unweighted overall accuracy, and the weighted score Σ weight·right / Σ weight (10/5/2 for
Objective/Reasoning/Relations); across runs, mean and standard deviation of each figure.
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MODES", "ResultRow", "Stat", "aggregate", "is_right_compatible", "is_right_strict", "mean_std",
]

MODES = ("strict", "compatible")


def is_right_compatible(answer: str | None, truth: str, multi: bool) -> bool:
    """WellPlay repository rule (``wellplay.md`` §7.3), quirks kept on purpose.

    - No parseable answer (``None``) or an empty / missing truth: wrong.
    - Single choice (type ``a``): right iff the *answer is a substring of the truth*. Hence truth
      ``ac`` accepts ``a``, ``c`` and ``ac``; truth ``bb`` (a typo) accepts ``b`` and ``bb``; and an
      explicitly *empty* answer (``{"answer": ""}``) counts as right — a bug of the original code,
      reproduced here only in this mode.
    - Multiple choice (type ``b``, "pick the two suspects"): right iff the *truth is a substring of
      the answer*: truth ``d`` and answer ``a,d`` is right, answering every letter is always right,
      and multi-letter truths are order-sensitive (truth ``ac`` vs answer ``a,c`` is wrong).
    """
    truth = (truth or "").strip().lower()
    if answer is None or not truth:
        return False
    answer = answer.strip().lower()
    return truth in answer if multi else answer in truth


def is_right_strict(letters: str | None, truth: str) -> bool:
    """Exact letter-set equality; unparseable answers and empty truths are wrong.

    Truth ``bb`` is the set {b}. Truth ``ac`` needs both ``a`` and ``c``. For the two-suspect
    questions, whose published truth is the single culprit letter, only answering exactly that
    letter is right — a model that names two people as asked scores 0 here but may score in
    *compatible* mode; the difference between the two modes shows that effect.
    """
    truth_set = {ch for ch in (truth or "").strip().lower() if ch.isalpha()}
    if letters is None or not truth_set:
        return False
    return set(letters.lower()) == truth_set


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
    rows = list(rows)
    return sum(r.right.get(mode, 0.0) for r in rows) / len(rows) if rows else None


def _weighted(rows: Iterable[ResultRow], mode: str) -> float | None:
    rows = list(rows)
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


def _block(rows: Sequence[ResultRow], runs: Sequence[int], categories: Sequence[str],
           modes: Sequence[str]) -> dict[str, Any]:
    """by_category + overall for a set of rows (one game, one character, or everything)."""
    by_category: dict[str, Any] = {}
    for cat in categories:
        cat_rows = [r for r in rows if r.category == cat]
        if not cat_rows:
            continue
        stats = {m: _per_run(cat_rows, runs, lambda rs, m=m: _accuracy(rs, m)) for m in modes}
        by_category[cat] = {m: stats[m].mean for m in modes}
        by_category[cat]["std"] = {m: stats[m].std for m in modes}
        by_category[cat]["n"] = stats[modes[0]].n
    overall: dict[str, Any] = {}
    for m in modes:
        acc = _per_run(rows, runs, lambda rs, m=m: _accuracy(rs, m))
        wtd = _per_run(rows, runs, lambda rs, m=m: _weighted(rs, m))
        overall[m] = {
            "accuracy": acc.mean, "accuracy_std": acc.std,
            "weighted": wtd.mean, "weighted_std": wtd.std,
            "accuracy_runs": acc.runs, "weighted_runs": wtd.runs,
        }
    overall["n"] = _per_run(rows, runs, lambda rs: 0.0).n
    return {"by_category": by_category, "overall": overall}


def aggregate(rows: Sequence[ResultRow], runs: int, categories: Sequence[str],
              modes: Sequence[str] = MODES) -> dict[str, Any]:
    """The core of ``summary.json``: by_category, overall, by_game, by_character (means over runs)."""
    run_ids = list(range(runs))
    scored = [r for r in rows if r.right]  # rows without a score (e.g. no judge) are left out
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
    return out
