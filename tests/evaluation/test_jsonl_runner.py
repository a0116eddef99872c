"""``evaluate --format jsonl``: factual (exact / normalised match, source shown) and inferential items
(informed accuracy by an LLM judge), on an own-written generic export, against the local server."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from casebook.openai_test_server import OpenAITestServer

from .conftest import load_summary, user_text

RECORDS = [
    {"id": "sin#0", "game": "sin", "game_title": "罪恶", "language": "zh", "kind": "factual", "stem": "赵慈善死在哪里？",
     "answer": "书房", "premises": [], "evidence": [{"quote": "赵慈善倒在书房的地板上。"}]},
    {"id": "sin#1", "game": "sin", "game_title": "罪恶", "language": "zh", "kind": "factual", "stem": "凶器是什么？",
     "answer": "Silver Knife", "premises": [], "evidence": [{"quote": "一把银色小刀 (silver knife)。"}]},
    {"id": "sin#2", "game": "sin", "game_title": "罪恶", "language": "zh", "kind": "inferential",
     "stem": "谁杀了赵慈善？", "answer": "王村长", "premises": ["王村长九点在书房", "刀上有王村长的指纹"],
     "evidence": []},
    {"id": "sin#3", "game": "sin", "game_title": "罪恶", "language": "zh", "kind": "inferential",
     "stem": "王村长为何杀人？", "answer": "为了遗产", "premises": ["遗嘱写着王村长继承一切"], "evidence": []},
    {"id": "sin#4", "game": "sin", "game_title": "罪恶", "language": "zh", "kind": "objective", "stem": "多选题",
     "answer": "a", "options": ["甲", "乙"], "premises": [], "evidence": []},
]


def _scripted(request: dict, n: int) -> str:
    text = user_text(request)
    if "rationale_score" in text and "Premises" in text:  # the judge
        if "遗产" in text:
            return "I cannot judge this."  # unreadable verdict: left out of informed, counted
        good = "指纹" in text.split("模型的理由")[1]
        return json.dumps({"answer_correct": True, "rationale_score": 5 if good else 2})
    if "死在哪里" in text:
        return '{"answer": "书房", "rationale": "材料"}'
    if "凶器" in text:
        return '{"answer": "silver knife!", "rationale": "材料"}'  # right only when normalised
    if "谁杀了" in text:
        return '{"answer": "王村长", "rationale": "他九点在书房，刀上有他的指纹"}'
    return '{"answer": "为了遗产", "rationale": "猜的"}'


@pytest.fixture
def export(tmp_path: Path) -> Path:
    directory = tmp_path / "export"
    directory.mkdir()
    (directory / "questions.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS) + "\n", encoding="utf-8")
    return directory


def test_factual_and_inferential_items_scored_with_a_judge(export, run_cli, tmp_path) -> None:
    with OpenAITestServer(responder=_scripted) as server:
        code, out, err = run_cli(export, "--format", "jsonl", "--model", "m", "--base-url", server.base_url,
                                 "--judge-model", "judge", "--cache-dir", tmp_path / "cache", "--no-progress",
                                 "--out", tmp_path / "r")
        assert code == 0, err
        assert server.count == 4 + 2  # four items (the MC item is not asked) + two judge verdicts
    s = load_summary(tmp_path / "r")
    cat = s["by_category"]
    assert cat["factual"]["exact"] == 0.5 and cat["factual"]["normalised"] == 1.0
    assert cat["inferential"]["exact"] == 1.0
    # one verdict readable (answer right, rationale 5/5 from the premises), one unreadable: left out
    assert cat["inferential"]["informed"] == 1.0 and cat["inferential"]["n"] == 2
    assert s["judge"]["model"] == "judge" and "{premises}" in s["judge"]["prompt"]
    assert s["judge"]["judged"] == 2 and s["judge"]["failed"] == 1
    assert "| factual | 2 | 50.0 | 100.0 |" in out
    with (tmp_path / "r" / "results.csv").open(encoding="utf-8") as fh:
        rows = {r["question_id"]: r for r in csv.DictReader(fh)}
    assert rows["sin#1"]["x_source"] == "一把银色小刀 (silver knife)。" and rows["sin#1"]["answer"] == "silver knife!"
    assert (tmp_path / "r" / "accuracy_by_category.png").is_file()
    assert "informed" in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")


def test_offline_baselines_need_no_server(export, run_cli, tmp_path) -> None:
    code, _, err = run_cli(export, "--format", "jsonl", "--model", "baseline:lexical", "--no-progress",
                           "--no-charts", "--out", tmp_path / "b")
    assert code == 0, err
    s = load_summary(tmp_path / "b")
    assert s["by_category"]["factual"]["exact"] == 0.0  # the source quote is not the short answer
    assert s["by_category"]["inferential"].get("informed") is None  # no judge offline
    code, _, err = run_cli(tmp_path, "--format", "jsonl", "--model", "baseline:random", "--out", tmp_path / "x")
    assert code == 2 and "questions.jsonl" in err
