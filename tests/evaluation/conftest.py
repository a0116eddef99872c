"""Fixtures for the evaluation tests: a local OpenAI-compatible server and a CLI runner."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from casebook.openai_test_server import OpenAITestServer
from evaluation.cli import main


@pytest.fixture
def server():
    with OpenAITestServer(reply='{"answer": "a"}') as srv:
        yield srv


def user_text(request: dict) -> str:
    """The text of the last user message of a chat request (string or content parts)."""
    content = request["messages"][-1]["content"]
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return content


@pytest.fixture
def run_cli(tmp_path: Path, capsys) -> Callable[..., tuple[int, str, str]]:
    """Run ``python -m evaluation`` in-process; returns (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def load_summary(report: Path) -> dict:
    return json.loads((report / "summary.json").read_text(encoding="utf-8"))


