"""``evaluate --format sessions``: belief matrices turn by turn against the Eq. 15 ground truth,
offline baselines and a model behind the local OpenAI-compatible server (cache included)."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from casebook.openai_test_server import OpenAITestServer
from evaluation.sessions import parse_beliefs, score_turn
from playlogs.export import write_sessions

pytestmark = pytest.mark.django_db

TRUTH = {"player1": ["player2"], "player2": ["player1"], "player3": ["player1"]}


def evaluate(export, out, *args) -> dict:
    stdout = StringIO()
    call_command("evaluate", str(export), "--format", "sessions", "--out", str(out), "--no-progress", "--no-charts",
                 *args, stdout=stdout)
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_scores_are_cross_entropy_argmax_and_mae():
    truth = [[0, 1, 0], [1 / 3] * 3, [0.5, 0.5, 0]]
    perfect = score_turn(truth, truth)
    assert perfect["argmax"] == 1.0 and perfect["mae"] == 0
    wrong = score_turn(truth, [[1, 0, 0], [1 / 3] * 3, [0, 0, 1]])
    assert wrong["argmax"] == 0.0  # the uniform truth row is not counted
    assert wrong["mae"] == pytest.approx((2 + 0 + 2) / 9)
    assert wrong["cross_entropy"] > perfect["cross_entropy"]
    assert parse_beliefs('```json\n{"beliefs": {"a": {"b": 3, "a": 1}}}\n```', ["a", "b"]) == [[0.25, 0.75], [0.5, 0.5]]
    assert parse_beliefs("no idea", ["a", "b"]) is None


def test_model_and_baselines_on_an_exported_session(onuw, tmp_path):
    write_sessions([onuw], tmp_path / "export")
    with OpenAITestServer(reply=json.dumps({"suspects": TRUTH})) as server:
        args = ["--model", "m", "--base-url", server.base_url, "--cache-dir", str(tmp_path / "cache")]
        summary = evaluate(tmp_path / "export", tmp_path / "r1", *args)
        assert server.count == 3  # one request per turn
        assert summary["benchmark"] == "sessions" and summary["questions"] == 3
        assert summary["belief"]["argmax_agreement"] == 1.0 and summary["belief"]["mae"] == 0
        assert summary["belief"]["cross_entropy"] == pytest.approx(0, abs=1e-5)
        again = evaluate(tmp_path / "export", tmp_path / "r2", *args)
        assert server.count == 3 and again["requests"]["cached"] == 3  # the shared cache answered
        assert "player1, player2, player3" in server.requests[0]["messages"][1]["content"]
    with OpenAITestServer(reply="I cannot tell.") as server:
        bad = evaluate(tmp_path / "export", tmp_path / "r3", "--model", "m", "--base-url", server.base_url,
                       "--cache-dir", str(tmp_path / "cache2"))
        assert bad["belief"]["unparseable"] == 3 and bad["belief"]["argmax_agreement"] == 0.0
    offline = evaluate(tmp_path / "export", tmp_path / "r4", "--model", "baseline:lexical")
    assert offline["requests"]["sent"] == 0 and offline["belief"]["mae"] is not None
    assert "Belief matrices" in (tmp_path / "r4" / "report.md").read_text(encoding="utf-8")


def test_an_export_without_sessions_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    stderr = StringIO()
    with pytest.raises(CommandError) as err:
        call_command("evaluate", str(tmp_path / "empty"), "--format", "sessions", "--model", "baseline:random",
                     "--out", str(tmp_path / "r"), stderr=stderr)
    assert err.value.returncode == 2
    assert "no session exports (session-*.jsonl)" in stderr.getvalue() and "export_sessions" in stderr.getvalue()
