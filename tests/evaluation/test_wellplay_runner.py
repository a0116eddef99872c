"""The WellPlay runner end to end on the real anchors, against the local server."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from casebook.openai_test_server import OpenAITestServer, Reply

from .conftest import load_summary, user_text

SIN_ZH = "罪恶（4人封闭）"


def _always_a(request: dict, n: int) -> str:
    """A scripted model: answers "a" to every question, "a,b" when asked for two suspects."""
    text = user_text(request)
    return '{"reason": "脚本", "answer": "a,b"}' if "请选出两个选项" in text else '{"reason": "脚本", "answer": "a"}'


def test_sin_zh_accuracy_matches_hand_count(wellplay_anchor: Path, run_cli, tmp_path: Path) -> None:
    # Hand count from chinese/罪恶（4人封闭）/final_result/*.csv (44 rows = 13 + 6 + 11 + 14):
    #   objective: 3 rows, truths b, b, b                       -> "a" right 0 / 3
    #   reasoning: 20 rows; truth "a" on where x3, when x3, "杀人狂是谁" x2 = 8;
    #              3 two-suspect rows (type b, truth b)           -> "a,b": repository right, strict wrong
    #   relations: 21 rows, every truth "a"                      -> 21 / 21
    # weighted points: 3*10 + 20*5 + 21*2 = 172; strict 8*5 + 21*2 = 82; repository 11*5 + 42 = 97
    final = wellplay_anchor / "chinese" / SIN_ZH / "final_result"
    rows = [r for f in final.glob("*.csv") if f.name != "GM.csv"
            for r in csv.DictReader(f.open(encoding="utf-8-sig")) if r.get("value")]
    assert len(rows) == 44 and sum(r["truth"] == "a" for r in rows) == 29

    out = tmp_path / "report"
    with OpenAITestServer(responder=_always_a) as server:
        code, stdout, stderr = run_cli(
            wellplay_anchor, "--format", "wellplay", "--model", "scripted", "--base-url", server.base_url,
            "--language", "zh", "--game", SIN_ZH, "--cache-dir", tmp_path / "cache", "--no-progress", "--out", out)
        assert code == 0, stderr
        assert server.count == 44
    s = load_summary(out)
    cat = s["by_category"]
    assert cat["objective"]["strict"] == 0 and cat["objective"]["repository"] == 0
    assert cat["reasoning"]["strict"] == pytest.approx(8 / 20)
    assert cat["reasoning"]["repository"] == pytest.approx(11 / 20)
    assert cat["relations"]["strict"] == cat["relations"]["repository"] == 1.0
    assert s["overall"]["strict"]["accuracy"] == pytest.approx(29 / 44)
    assert s["overall"]["repository"]["accuracy"] == pytest.approx(32 / 44)
    assert s["overall"]["strict"]["weighted"] == pytest.approx(82 / 172)
    assert s["overall"]["repository"]["weighted"] == pytest.approx(97 / 172)
    assert (s["requests"]["sent"], s["requests"]["cached"], s["requests"]["failed"]) == (44, 0, 0)
    assert s["requests"]["endpoint"].startswith("http://127.0.0.1:")
    # the murderer 王村长 is asked only 6 relation questions (all truth a)
    assert s["by_character"][SIN_ZH]["王村长"]["overall"]["strict"]["accuracy"] == 1.0
    assert s["by_game"][SIN_ZH]["overall"]["strict"]["weighted"] == pytest.approx(82 / 172)
    assert "report written to" in stdout and "| reasoning | 20 | 40.0 | 55.0 |" in stdout

    # summary.json shape promised by the issue
    for c in ("objective", "reasoning", "relations"):
        assert set(cat[c]) >= {"strict", "repository"}
    for mode in ("strict", "repository"):
        assert set(s["overall"][mode]) >= {"accuracy", "weighted"}
    assert s["runs"] == 1 and set(s["requests"]) >= {"sent", "cached"}
    for name in ("results.csv", "by_category.csv", "by_game.csv", "by_character.csv", "report.md", "config.json",
                 "accuracy_by_category.png", "accuracy_by_game.png", "runs.png"):
        assert (out / name).is_file(), name
    assert (out / "accuracy_by_category.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with (out / "results.csv").open(encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 44

    # rerun against the same endpoint: every answer from the cache, zero requests, same numbers
    with OpenAITestServer(responder=_always_a, port=int(s["requests"]["endpoint"].split(":")[-1][:-3])) as server:
        code, _, _ = run_cli(
            wellplay_anchor, "--format", "wellplay", "--model", "scripted", "--base-url", server.base_url,
            "--language", "zh", "--game", SIN_ZH, "--cache-dir", tmp_path / "cache", "--no-progress",
            "--no-charts", "--out", tmp_path / "again")
        assert code == 0 and server.count == 0
    again = load_summary(tmp_path / "again")
    assert (again["requests"]["sent"], again["requests"]["cached"], again["requests"]["failed"]) == (0, 44, 0)
    assert again["overall"] == s["overall"]

    # another endpoint with the same model name never reads this cache; --no-cache neither reads nor writes
    with OpenAITestServer(reply='{"answer": "b"}') as other:
        code, _, err = run_cli(
            wellplay_anchor, "--format", "wellplay", "--model", "scripted", "--base-url", other.base_url,
            "--language", "zh", "--game", SIN_ZH, "--cache-dir", tmp_path / "cache", "--no-progress",
            "--no-charts", "--out", tmp_path / "other")
        assert code == 0, err
        assert other.count == 44
        files = len(list((tmp_path / "cache").rglob("*.json")))
        code, _, err = run_cli(
            wellplay_anchor, "--format", "wellplay", "--model", "scripted", "--base-url", other.base_url,
            "--language", "zh", "--game", SIN_ZH, "--cache-dir", tmp_path / "cache", "--no-progress",
            "--no-charts", "--no-cache", "--out", tmp_path / "uncached")
        assert code == 0 and other.count == 88 and len(list((tmp_path / "cache").rglob("*.json"))) == files
    assert load_summary(tmp_path / "other")["by_category"]["objective"]["strict"] == 1.0  # Sin's truths are b


def test_perspectives_put_the_right_scripts_in_the_prompt(wellplay_anchor: Path, run_cli, tmp_path: Path) -> None:
    seen: dict[str, list[str]] = {}
    for perspective in ("own", "all", "none"):
        with OpenAITestServer(reply="A") as server:
            code, _, err = run_cli(
                wellplay_anchor, "--format", "wellplay", "--model", "scripted", "--base-url", server.base_url,
                "--language", "zh", "--game", SIN_ZH, "--limit", "1", "--perspective", perspective,
                "--cache-dir", tmp_path / "cache", "--no-progress", "--no-charts", "--out", tmp_path / perspective)
            assert code == 0, err
            seen[perspective] = [user_text(r) for r in server.requests]
    chars = ["张村民", "王村长", "李警察", "胡调研"]
    own = next(t for t in seen["own"] if "赵慈善被谁杀死的" in t)
    assert "你扮演的角色是【" in own and sum(f"【角色剧本：{c}】" in own for c in chars) == 0
    assert all(sum(f"【角色剧本：{c}】" in t for c in chars) == 4 for t in seen["all"])
    assert all("角色剧本" not in t and "你扮演" not in t for t in seen["none"])
    assert len(seen["none"]) == 3  # --limit 1: one question per category


def test_malformed_and_failed_replies_are_wrong_answers_not_crashes(wellplay_anchor, run_cli, tmp_path) -> None:
    def flaky(request: dict, n: int):
        if n % 3 == 0:
            return Reply.malformed()
        return "我不知道" if n % 3 == 1 else '{"answer": "a"}'

    with OpenAITestServer(responder=flaky) as server:
        code, _, err = run_cli(
            wellplay_anchor, "--format", "wellplay", "--model", "scripted", "--base-url", server.base_url,
            "--language", "en", "--game", "Sin (4 people closed)", "--max-retries", "0", "--no-progress", "--no-charts",
            "--cache-dir", tmp_path / "cache", "--out", tmp_path / "r")
    s = load_summary(tmp_path / "r")
    assert code == 1 and "rerun the same command" in err  # failures reported, report still written
    outcomes = s["outcomes"]
    assert outcomes["failed"] == s["requests"]["failed"] > 0 and outcomes["unparseable"] > 0
    assert outcomes["answered"] + outcomes["unparseable"] + outcomes["failed"] == 44
    # accuracy over answered + unparseable only: every answered reply is "a"
    assert s["by_category"]["objective"]["n"] + s["by_category"]["reasoning"]["n"] + \
        s["by_category"]["relations"]["n"] == 44 - outcomes["failed"]


def test_baselines_are_deterministic_with_a_seed(wellplay_anchor, run_cli, tmp_path) -> None:
    figures = {}
    for model in ("baseline:random", "baseline:lexical"):
        for name, seed in (("a", "7"), ("b", "7"), ("c", "8")):
            code, _, err = run_cli(wellplay_anchor, "--format", "wellplay", "--model", model, "--seed", seed,
                                   "--runs", "2", "--language", "zh", "--out", tmp_path / f"{model[9:]}-{name}",
                                   "--no-progress", "--no-charts")
            assert code == 0, err
            rows = (tmp_path / f"{model[9:]}-{name}" / "results.csv").read_text(encoding="utf-8")
            figures[(model, name)] = rows
        assert figures[(model, "a")] == figures[(model, "b")]
    assert figures[("baseline:random", "a")] != figures[("baseline:random", "c")]
    s = load_summary(tmp_path / "random-a")
    assert (s["requests"]["sent"], s["requests"]["failed"]) == (0, 0) and s["questions"] == 80


def test_real_model_without_key_fails_with_a_clear_message(wellplay_anchor, run_cli, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, err = run_cli(wellplay_anchor, "--format", "wellplay", "--model", "gpt-4o", "--out", tmp_path / "x")
    assert code == 2 and "OPENAI_API_KEY" in err and "baseline:random" in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()
    code, _, err = run_cli(tmp_path / "missing", "--format", "wellplay", "--model", "baseline:random",
                           "--out", tmp_path / "y")
    assert code == 2 and "export directory not found" in err
    code, _, err = run_cli(wellplay_anchor, "--format", "wellplay", "--model", "baseline:random", "--game", "Nope",
                           "--out", tmp_path / "z")
    assert code == 2 and "no game matches" in err and "Sin (4 people closed)" in err


def test_a_run_killed_part_way_resumes_with_only_the_missing_questions(wellplay_anchor, run_cli, tmp_path) -> None:
    args = ["--format", "wellplay", "--model", "scripted", "--language", "zh", "--game", SIN_ZH,
            "--concurrency", "1", "--max-retries", "0", "--cache-dir", tmp_path / "cache", "--no-progress",
            "--no-charts"]
    with OpenAITestServer(responder=_always_a, fail_after=10) as server:
        code, _, err = run_cli(wellplay_anchor, *args, "--base-url", server.base_url, "--out", tmp_path / "first")
        assert code == 1 and server.count == 44
        first = load_summary(tmp_path / "first")
        assert (first["requests"]["sent"], first["requests"]["cached"], first["requests"]["failed"]) == (44, 0, 34)
        assert first["outcomes"]["failed_by_reason"] == {"server": 34} and "34 × server" in err
        # the 34 failures are not scored: accuracy is over the 10 answered rows only
        assert first["overall"]["strict"]["accuracy"] is not None and first["by_category"]["objective"]["n"] <= 10
        server.fail_after = None  # the endpoint recovers
        server.reset_counters()
        code, _, err = run_cli(wellplay_anchor, *args, "--base-url", server.base_url, "--out", tmp_path / "second")
        assert code == 0, err
        assert server.count == 34  # only the questions that had failed
    second = load_summary(tmp_path / "second")
    assert (second["requests"]["sent"], second["requests"]["cached"], second["requests"]["failed"]) == (34, 10, 0)
    assert second["overall"]["strict"]["weighted"] == pytest.approx(82 / 172)


def test_failures_are_named_and_never_scored(wellplay_anchor, run_cli, tmp_path) -> None:
    """A prompt over a small server's context is a *context* failure, not a wrong answer; 401 stops."""
    args = ["--format", "wellplay", "--model", "scripted", "--language", "zh", "--game", SIN_ZH,
            "--cache-dir", tmp_path / "cache", "--no-progress", "--no-charts"]
    with OpenAITestServer(reply='{"answer": "b"}', context_size=600, advertise_context=False) as small:
        code, out, err = run_cli(wellplay_anchor, *args, "--base-url", small.base_url, "--perspective", "own",
                                 "--out", tmp_path / "small")
    s = load_summary(tmp_path / "small")
    failed = s["outcomes"]["failed_by_reason"].get("context", 0)
    assert code == 1 and failed > 0 and "× context" in err and "rerunning fails the same way" in err
    assert s["outcomes"]["answered"] + failed == 44
    asked = sum(block["n"] for block in s["by_category"].values())
    assert asked == 44 - failed  # the table is over the answered rows only, never a 0 for a failure
    with OpenAITestServer(api_key="secret") as guarded:
        code, out, err = run_cli(wellplay_anchor, *args, "--base-url", guarded.base_url, "--out", tmp_path / "auth")
        assert code == 3 and "refused" in err and "Traceback" not in err
        assert guarded.count < 44


def test_prompts_are_trimmed_to_the_context_the_server_reports(wellplay_anchor, run_cli, tmp_path) -> None:
    """A llama.cpp-like server (2,048 tokens, one slot) reports its context in /v1/models: every prompt is
    trimmed to fit with the reply, each trimmed row says so, and no request fails for its length."""
    args = ["--format", "wellplay", "--model", "test-model", "--language", "zh", "--game", SIN_ZH,
            "--perspective", "all", "--concurrency", "8", "--cache-dir", tmp_path / "cache", "--no-progress",
            "--no-charts"]
    with OpenAITestServer.like_llama_cpp(context_size=2048, reply='{"answer": "a"}') as server:
        code, _, err = run_cli(wellplay_anchor, *args, "--base-url", server.base_url, "--out", tmp_path / "fit")
        assert code == 0, err
        assert server.max_computing == 1
    s = load_summary(tmp_path / "fit")
    assert s["outcomes"]["failed"] == 0 and s["outcomes"]["answered"] == 44
    assert s["context"]["max_context"] == 2048 and s["context"]["source"] == "/v1/models"
    assert s["context"]["trimmed_rows"] == 44  # every "all scripts" prompt is far longer than 2k tokens
    with (tmp_path / "fit" / "results.csv").open(encoding="utf-8") as fh:
        notes = [row["x_context_note"] for row in csv.DictReader(fh)]
    assert all(note.startswith("context trimmed:") and "limit 1081" in note for note in notes)

    # --max-context overrides; a server that says nothing and gets the full prompt fails it as "context"
    with OpenAITestServer(context_size=2048, reply='{"answer": "a"}') as server:
        code, _, err = run_cli(wellplay_anchor, *args, "--base-url", server.base_url, "--max-context", "4096",
                               "--out", tmp_path / "wide")
    wide = load_summary(tmp_path / "wide")
    assert wide["context"]["source"] == "--max-context" and wide["context"]["prompt_limit"] == int(4096 - 800 - (0.05 * 4096 + 64))
