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
