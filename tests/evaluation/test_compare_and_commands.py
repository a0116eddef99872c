"""``compare`` and the Django management commands, which call the same CLI code."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from .conftest import load_summary


@pytest.fixture(scope="module")
def two_reports(wellplay_anchor: Path, tmp_path_factory) -> list[Path]:
    base = tmp_path_factory.mktemp("reports")
    reports = []
    for model in ("random", "lexical"):
        out = base / model
        stdout = io.StringIO()
        call_command("evaluate", str(wellplay_anchor), "--format", "wellplay", "--model", f"baseline:{model}",
                     "--language", "en", "--no-progress", "--no-charts", "--out", str(out), stdout=stdout)
        assert f"report written to {out.resolve()}" in stdout.getvalue()
        reports.append(out)
    return reports


def test_manage_py_evaluate_writes_the_same_report(two_reports: list[Path]) -> None:
    s = load_summary(two_reports[0])
    assert s["model"] == "baseline:random" and s["questions"] == 80 and s["language"] == "en"


def test_compare_cli_puts_reports_side_by_side(two_reports, run_cli, tmp_path) -> None:
    code, out, err = run_cli("compare", *two_reports, "--out", tmp_path / "cmp")
    assert code == 0, err
    header = out.splitlines()[0]
    assert "random (baseline:random, own, 1 runs)" in header and "lexical (baseline:lexical" in header
    assert "| objective (strict) |" in out and "| overall weighted (repository) |" in out
    for name in ("compare.md", "compare.csv", "compare.png"):
        assert (tmp_path / "cmp" / name).is_file()


def test_manage_py_compare_and_its_errors(two_reports, tmp_path) -> None:
    stdout = io.StringIO()
    call_command("compare", *map(str, two_reports), stdout=stdout)
    assert "overall accuracy (strict)" in stdout.getvalue()
    with pytest.raises(CommandError):
        call_command("compare", str(tmp_path), stdout=io.StringIO(), stderr=io.StringIO())


def test_manage_py_evaluate_reports_configuration_errors(wellplay_anchor, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    stderr = io.StringIO()
    with pytest.raises(CommandError):
        call_command("evaluate", str(wellplay_anchor), "--format", "wellplay", "--model", "gpt-4o",
                     "--out", str(tmp_path / "x"), stdout=io.StringIO(), stderr=stderr)
    assert "baseline:lexical" in stderr.getvalue()


def test_reports_from_before_the_rename_compare_as_repository(tmp_path) -> None:
    """``compatible`` (the old name of the repository mode) is read as ``repository``."""
    import json

    from evaluation.report import compare_reports

    old = tmp_path / "old"
    old.mkdir()
    (old / "summary.json").write_text(json.dumps({
        "model": "m", "perspective": "own", "runs": 1, "requests": {"sent": 1, "cached": 0},
        "by_category": {"objective": {"strict": 0.5, "compatible": 0.75, "std": {"strict": 0, "compatible": 0}}},
        "overall": {"strict": {"accuracy": 0.5}, "compatible": {"accuracy": 0.75, "weighted": 0.75}},
    }), encoding="utf-8")
    text = compare_reports([old])
    assert "| objective (repository) | 75.0 ± 0.0 |" in text and "compatible" not in text
