"""Writing a report directory (CSV, Markdown, PNG, summary.json) and comparing several of them.

Layout of REPORT_DIR::

    summary.json          machine-readable figures (means over runs; see :func:`build_summary`)
    config.json           the full configuration (model, prompts' budget, judge model and prompt …)
    results.csv           one row per question per run: reply, parsed answer, truth, right?
    by_category.csv  by_game.csv  by_character.csv   tables (mean and std over runs)
    report.md             the same tables in Markdown
    accuracy_by_category.png  accuracy_by_game.png  runs.png   charts (CJK-capable font)
"""
from __future__ import annotations

import csv
import functools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluation.scoring import MODES, ResultRow, canonical_mode

__all__ = ["CJK_FONT", "compare_reports", "format_short_table", "load_summary", "write_report"]

CJK_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc")
SUMMARY = "summary.json"


def _pct(value: float | None) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}"


def _pm(mean: float | None, std: float | None) -> str:
    if mean is None:
        return "–"
    return f"{100 * mean:.1f} ± {100 * (std or 0):.1f}"


# -- tables ---------------------------------------------------------------------------------

def modes_of(summary: dict[str, Any]) -> list[str]:
    """The scoring modes a summary reports (``modes``; WellPlay/WhodunitBench: strict and repository)."""
    return list(summary.get("modes") or MODES)


def _category_rows(block: dict[str, Any], modes: Sequence[str] = MODES) -> list[dict[str, Any]]:
    rows = []
    for cat, stats in block.get("by_category", {}).items():
        row = {"category": cat, "n": stats.get("n")}
        for m in modes:
            row[f"{m}_mean"] = stats.get(m)
            row[f"{m}_std"] = stats.get("std", {}).get(m)
        rows.append(row)
    overall = block.get("overall", {})
    row = {"category": "overall", "n": overall.get("n")}
    for m in modes:
        row[f"{m}_mean"] = overall.get(m, {}).get("accuracy")
        row[f"{m}_std"] = overall.get(m, {}).get("accuracy_std")
    rows.append(row)
    row = {"category": "overall (weighted)", "n": overall.get("n")}
    for m in modes:
        row[f"{m}_mean"] = overall.get(m, {}).get("weighted")
        row[f"{m}_std"] = overall.get(m, {}).get("weighted_std")
    rows.append(row)
    return rows


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    fields: list[str] = []
    for row in rows:
        fields.extend(k for k in row if k not in fields)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields or ["empty"])
        writer.writeheader()
        writer.writerows(rows)


def _md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _block_md(block: dict[str, Any], modes: Sequence[str] = MODES) -> str:
    rows = [[r["category"], r["n"]] + [_pm(r[f"{m}_mean"], r[f"{m}_std"]) for m in modes]
            for r in _category_rows(block, modes)]
    return _md_table(["category", "n"] + [f"{m} % (mean ± std)" for m in modes], rows)


def format_short_table(summary: dict[str, Any]) -> str:
    """The few lines the CLI prints at the end."""
    modes = modes_of(summary)
    rows = [[r["category"], r["n"]] + [_pct(r[f"{m}_mean"]) for m in modes] for r in _category_rows(summary, modes)]
    return _md_table(["category", "n"] + [f"{m} %" for m in modes], rows)


# -- charts ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _pyplot():
    import logging

    import matplotlib

    matplotlib.use("Agg")
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)  # wqy registers weight 500 only
    from matplotlib import font_manager
    from matplotlib import pyplot as plt

    if CJK_FONT.exists():
        font_manager.fontManager.addfont(str(CJK_FONT))
        name = font_manager.FontProperties(fname=str(CJK_FONT)).get_name()
        plt.rcParams["font.family"] = [name, "DejaVu Sans"]
    plt.rcParams["axes.unicode_minus"] = False
    return plt


def _bars(path: Path, title: str, labels: list[str], series: dict[str, list[float | None]],
          errors: dict[str, list[float | None]] | None = None, ylabel: str = "accuracy (%)") -> None:
    plt = _pyplot()
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(min(14.0, max(6.0, 0.8 * len(labels) * max(1, len(series)) + 2)), 4.5))
    for k, (name, values) in enumerate(series.items()):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(labels))]
        ys = [100 * v if v is not None else 0.0 for v in values]
        err = [100 * (e or 0) for e in errors[name]] if errors and name in errors else None
        bars = ax.bar(xs, ys, width, label=name, yerr=err, capsize=3 if err else 0)
        for j, (bar, v) in enumerate(zip(bars, values, strict=True)):
            top = bar.get_height() + (err[j] if err else 0) + 1
            ax.annotate("n/a" if v is None else f"{100 * v:.0f}", (bar.get_x() + bar.get_width() / 2, top),
                        ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=20 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center")
    ax.set_ylim(0, 112)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _charts(out: Path, summary: dict[str, Any], title: str) -> list[str]:
    written = []
    modes = modes_of(summary)
    cats = list(summary.get("by_category", {}))
    labels = cats + ["overall", "weighted"]
    series = {m: [summary["by_category"][c].get(m) for c in cats]
              + [summary["overall"].get(m, {}).get("accuracy"), summary["overall"].get(m, {}).get("weighted")]
              for m in modes}
    errors = {m: [summary["by_category"][c].get("std", {}).get(m) for c in cats]
              + [summary["overall"].get(m, {}).get("accuracy_std"), summary["overall"].get(m, {}).get("weighted_std")]
              for m in modes}
    _bars(out / "accuracy_by_category.png", f"{title} — by category", labels, series, errors)
    written.append("accuracy_by_category.png")
    games = list(summary.get("by_game", {}))
    if games:
        series = {m: [summary["by_game"][g]["overall"].get(m, {}).get("accuracy") for g in games] for m in modes}
        errors = {m: [summary["by_game"][g]["overall"].get(m, {}).get("accuracy_std") for g in games] for m in modes}
        _bars(out / "accuracy_by_game.png", f"{title} — by game (unweighted)", games, series, errors)
        written.append("accuracy_by_game.png")
    runs = summary.get("runs", 1)
    key = "weighted" if summary.get("benchmark") == "wellplay" else "accuracy"
    series = {m: summary["overall"].get(m, {}).get(f"{key}_runs") or [None] * runs for m in modes}
    _bars(out / "runs.png", f"{title} — overall {key} per run", [f"run {i + 1}" for i in range(runs)], series)
    written.append("runs.png")
    return written


# -- writing --------------------------------------------------------------------------------

def write_report(out: Path, summary: dict[str, Any], rows: Sequence[ResultRow], config: dict[str, Any],
                 extra_md: str = "", charts: bool = True) -> list[str]:
    """Write every report file; returns the file names written."""
    out.mkdir(parents=True, exist_ok=True)
    files = [SUMMARY, "config.json", "results.csv", "by_category.csv", "by_game.csv", "by_character.csv", "report.md"]
    (out / SUMMARY).write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    (out / "config.json").write_text(json.dumps(config, ensure_ascii=False, indent=2), encoding="utf-8")
    _write_csv(out / "results.csv", [
        {"run": r.run + 1, "game": r.game, "character": r.character, "question_id": r.question_id,
         "category": r.category, "sub_type": r.sub_type, "multi": int(r.multi), "level": r.level, "weight": r.weight,
         "truth": r.truth, "answer": "" if r.answer is None else r.answer, "answer_raw": r.answer_raw,
         "parsed": int(r.answer is not None), "right_strict": r.right.get("strict"),
         **{f"right_{m}": r.right.get(m) for m in modes_of(summary)}, "status": r.status, "failure": r.failure,
         "cached": int(r.cached), "error": r.error,
         "reply": r.reply or "", **{f"x_{k}": v for k, v in r.extra.items()}}
        for r in rows
    ])
    modes = modes_of(summary)
    _write_csv(out / "by_category.csv", _category_rows(summary, modes))
    _write_csv(out / "by_game.csv", [{"game": g, **row} for g, block in summary.get("by_game", {}).items()
                                     for row in _category_rows(block, modes)])
    _write_csv(out / "by_character.csv", [
        {"game": g, "character": c, **row}
        for g, chars in summary.get("by_character", {}).items() for c, block in chars.items()
        for row in _category_rows(block, modes)])
    title = f"{summary.get('benchmark', '')} · {summary.get('model', '')} · {summary.get('perspective', '')}"
    outcomes = summary.get("outcomes", {})
    reasons = ", ".join(f"{k} {v}" for k, v in outcomes.get("failed_by_reason", {}).items())
    md = [f"# Evaluation report: {title}", "",
          f"Runs: {summary.get('runs')} · questions per run: {summary.get('questions')} · "
          f"requests sent {summary['requests']['sent']}, cached {summary['requests']['cached']}, "
          f"failed {summary['requests'].get('failed', 0)} · unparseable replies: {summary.get('unparseable', 0)}",
          "", f"Rows answered {outcomes.get('answered', 0)}, unparseable {outcomes.get('unparseable', 0)}, "
          f"failed {outcomes.get('failed', 0)}" + (f" ({reasons})" if reasons else "")
          + " — failed rows are not scored: accuracy is over answered + unparseable rows.",
          "", summary.get("modes_note") or (
              "Accuracy in %. *strict* = JSON answer field or one unambiguous option letter, exact letter set "
              "(mean ± sample std over runs); *repository* (alias *compatible*) = the WellPlay repository's "
              "extraction and substring rules, quirks kept, averaged per file (game × run) then over files."),
          "", "## Overall", "", _block_md(summary, modes)]
    for game, block in summary.get("by_game", {}).items():
        md += ["", f"## {game}", "", _block_md(block, modes)]
        for character, cblock in summary.get("by_character", {}).get(game, {}).items():
            md += ["", f"### {game} · {character}", "", _block_md(cblock, modes)]
    if extra_md:
        md += ["", extra_md]
    try:
        drawn = _charts(out, summary, title) if charts else []
        md += [""] + [f"![{name}]({name})" for name in drawn]
        files += drawn
    except Exception as exc:  # noqa: BLE001 - a chart problem must not lose the numbers
        md += ["", f"(charts not drawn: {type(exc).__name__}: {exc})"]
    (out / "report.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    return files


# -- compare --------------------------------------------------------------------------------

def load_summary(report_dir: Path) -> dict[str, Any]:
    path = Path(report_dir) / SUMMARY
    if not path.is_file():
        raise FileNotFoundError(f"{report_dir} is not a report directory (no {SUMMARY})")
    try:
        return _rename_aliases(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from exc


def _rename_aliases(value: Any) -> Any:
    """Reports written before the rename call the repository mode ``compatible``."""
    if isinstance(value, dict):
        return {canonical_mode(k): _rename_aliases(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename_aliases(v) for v in value]
    return value


def compare_reports(report_dirs: Sequence[Path], out: Path | None = None) -> str:
    """A Markdown table with one column per report; with ``out`` also compare.md/.csv/.png."""
    summaries = [(Path(d), load_summary(Path(d))) for d in report_dirs]
    labels = []
    for d, s in summaries:
        labels.append(f"{d.name} ({s.get('model', '?')}, {s.get('perspective', '?')}, {s.get('runs', 1)} runs)")
    cats: list[str] = []
    for _, s in summaries:
        cats.extend(c for c in s.get("by_category", {}) if c not in cats)
    table_rows = []
    csv_rows = []
    modes: list[str] = []
    for _, s in summaries:
        modes.extend(m for m in modes_of(s) if m not in modes)
    for cat in cats:
        for m in modes:
            vals = [s.get("by_category", {}).get(cat, {}).get(m) for _, s in summaries]
            stds = [s.get("by_category", {}).get(cat, {}).get("std", {}).get(m) for _, s in summaries]
            table_rows.append([f"{cat} ({m})"] + [_pm(v, e) for v, e in zip(vals, stds, strict=True)])
            csv_rows.append({"metric": f"{cat}/{m}", **dict(zip(labels, vals, strict=True))})
    for key in ("accuracy", "weighted"):
        for m in modes:
            vals = [s.get("overall", {}).get(m, {}).get(key) for _, s in summaries]
            stds = [s.get("overall", {}).get(m, {}).get(f"{key}_std") for _, s in summaries]
            table_rows.append([f"overall {key} ({m})"] + [_pm(v, e) for v, e in zip(vals, stds, strict=True)])
            csv_rows.append({"metric": f"overall_{key}/{m}", **dict(zip(labels, vals, strict=True))})
    table_rows.append(["requests sent / cached"] + [f"{s['requests']['sent']} / {s['requests']['cached']}"
                                                     for _, s in summaries])
    text = _md_table(["metric"] + labels, table_rows)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.md").write_text("# Comparison\n\n" + text + "\n", encoding="utf-8")
        _write_csv(out / "compare.csv", csv_rows)
        series = {label: [s.get("by_category", {}).get(c, {}).get("strict") for c in cats]
                  + [s.get("overall", {}).get("strict", {}).get("accuracy")] for label, (_, s) in
                  zip(labels, summaries, strict=True)}
        _bars(out / "compare.png", "strict accuracy by category", cats + ["overall"], series)
    return text
