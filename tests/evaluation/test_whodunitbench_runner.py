"""The WhodunitBench runner on the XIAOHUA_example anchor with a scripted model and judge."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from casebook.openai_test_server import OpenAITestServer

from .conftest import load_summary, user_text


def _scripted(request: dict, n: int) -> str:
    text = user_text(request)
    if "评委" in text:  # the CMD judge prompt
        return '{"score": 80, "reason": "动机正确，手法部分正确"}'
    if "作案动机：" in text and "作案手法：" in text and "问题：" not in text:
        return "作案动机：仇恨。\n作案手法：替换了维生素C。"
    return '{"reason": "脚本", "answer": "b"}'


def _images(request: dict) -> list[str]:
    content = request["messages"][-1]["content"]
    if not isinstance(content, list):
        return []
    return [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]


def test_xiaohua_with_a_scripted_model(whodunitbench_anchor: Path, run_cli, tmp_path: Path) -> None:
    game_dir = whodunitbench_anchor / "XIAOHUA_example"
    env = json.loads((game_dir / "env_p_all.json").read_text(encoding="utf-8"))
    detective = next(r for r in env["role"] if r["m"] == 0)
    expected = {
        "lsu": sum(a == "b" for a in detective["a"][:2]) / 2,
        "tiu": sum(a == "b" for a in env["ei_q"]["key_ans"][:2]) / 2,
        "miu": sum(a == "b" for a in env["cxi_q"]["key_ans"][:2]) / 2,
        "mmr": sum(q["ans"] == "b" for q in env["key_clues_questions"][:2]) / 2,
    }
    out = tmp_path / "wb"
    judge_prompt = tmp_path / "judge.txt"
    judge_prompt.write_text('你是评委。真相：{truth}\n玩家：{prediction}\n输出 {"score": 0-100}', encoding="utf-8")
    with OpenAITestServer(responder=_scripted) as server:
        code, stdout, err = run_cli(
            game_dir, "--format", "whodunitbench", "--model", "vision-model", "--base-url", server.base_url,
            "--judge-model", "judge-model", "--judge-prompt", judge_prompt, "--limit", "2", "--cache-dir", tmp_path / "cache", "--no-progress", "--no-charts",
            "--out", out)
        assert code == 0, err
        requests = list(server.requests)
    assert len(requests) == 8 + 1 + 1  # 2 per category, one CMD deduction, one judge verdict
    s = load_summary(out)
    for key, value in expected.items():
        assert s["by_category"][key]["strict"] == pytest.approx(value), key
    assert s["by_category"]["cmd"]["strict"] == pytest.approx(0.8)
    assert s["by_category"]["cmd"]["judge_model"] == "judge-model"
    assert set(s["by_category"]) == {"lsu", "tiu", "miu", "mmr", "cmd"}
    assert set(s["mmr_levels"]) <= {"0", "1", "2", "3", "4", "5", "6", "7", "role"} and s["mmr_levels"]

    image_questions = [r for r in requests if r["model"] == "vision-model" and _images(r)]
    assert len(image_questions) == 6  # TIU, MIU and MMR questions carry the images
    assert all(len(_images(r)) == 11 for r in image_questions)
    assert all(url.startswith("data:image/png;base64,") for url in _images(image_questions[0]))
    judged = [r for r in requests if r["model"] == "judge-model"]
    assert len(judged) == 1 and "替换了维生素C" in user_text(judged[0])
    assert env["reason"].strip()[:20] in user_text(judged[0]) and '{"score": 0-100}' in user_text(judged[0])

    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["judge_model"] == "judge-model" and config["judge_prompt"].startswith("你是评委。真相：{truth}")

    # recorded agent logs (two runs in XIAOHUA): nobody voted for the murderer 白老师 (whodunitbench.md §7)
    agents = s["agents"]["XIAOHUA_example"]
    assert [r["vote"] for r in agents["runs"]] == [0.0, 0.0]
    assert [r["itd"] for r in agents["runs"]] == [0.0, 0.5]  # key roles 鬼学姐, 鸥学妹: run 2 asked 鸥学妹
    assert [r["spc_counts"][1] for r in agents["runs"]] == [2, 2]


def test_recorded_votes_on_di7mi_2(whodunitbench_anchor: Path, run_cli, tmp_path: Path) -> None:
    code, _, err = run_cli(whodunitbench_anchor / "DI7MI_2", "--format", "whodunitbench", "--model",
                           "baseline:random", "--limit", "1", "--no-progress", "--no-charts", "--out", tmp_path / "r")
    assert code == 0, err
    s = load_summary(tmp_path / "r")
    run = s["agents"]["DI7MI_2"]["runs"][0]
    assert run["vote"] == pytest.approx(3 / 5)  # 3 of 5 detectives named 罗尔夫
    assert run["votes"]["萨拉"] == "罗尔夫"  # the alias 达文西 resolved to 萨拉
    assert run["itd"] == 1.0  # the only key role (the murderer) was questioned
    assert s["by_category"]["cmd"]["strict"] is None  # a baseline writes no deduction and no judge was given


def test_text_only_sends_no_images_and_reports_what_it_skipped(whodunitbench_anchor: Path, run_cli, tmp_path) -> None:
    """A text-only server: no request carries an image; image questions without stored text are skipped."""
    game_dir = whodunitbench_anchor / "XIAOHUA_example"
    with OpenAITestServer(responder=_scripted) as server:
        code, _, err = run_cli(
            game_dir, "--format", "whodunitbench", "--model", "text-model", "--base-url", server.base_url,
            "--text-only", "--limit", "2", "--cache-dir", tmp_path / "cache", "--no-progress", "--no-charts",
            "--out", tmp_path / "t")
        assert code == 0, err
        assert not any(_images(r) for r in server.requests)
    s = load_summary(tmp_path / "t")
    # the anchor's images carry no OCR text: TIU/MIU are skipped (counted), LSU and MMR asked as text
    assert s["text_only"]["skipped_without_image_text"] == {"tiu": 2, "miu": 2}
    assert set(s["by_category"]) >= {"lsu", "mmr"} and "tiu" not in s["by_category"]


def test_text_only_gives_image_questions_the_stored_image_text(whodunitbench_anchor: Path, tmp_path) -> None:
    from evaluation.config import EvalConfig
    from evaluation.whodunitbench import build_items, load_games

    config = EvalConfig(export_dir=whodunitbench_anchor / "XIAOHUA_example", format="whodunitbench",
                        model="text-model", out=tmp_path / "o", base_url="http://127.0.0.1:9/v1", text_only=True,
                        limit=1)
    [game] = load_games(config)
    game.clues[0].ocr_text = "死者的日记：三月五日，维生素C被换了。"
    items = build_items([game], config)
    tiu = next(i for i in items if i.category == "tiu")
    text = user_text({"messages": tiu.messages})
    assert "维生素C被换了" in text and isinstance(tiu.messages[-1]["content"], str)  # text, no image parts


def test_a_server_that_refuses_images_gets_them_twice_at_most(whodunitbench_anchor: Path, run_cli, tmp_path) -> None:
    from casebook.openai_test_server import Reply

    def text_only_server(request: dict, n: int):
        if _images(request):
            return Reply.error(500, "image input is not supported by this model")
        return _scripted(request, n)

    with OpenAITestServer(responder=text_only_server) as server:
        code, _, err = run_cli(
            whodunitbench_anchor / "XIAOHUA_example", "--format", "whodunitbench", "--model", "text-model",
            "--base-url", server.base_url, "--limit", "2", "--concurrency", "1", "--max-retries", "5",
            "--cache-dir", tmp_path / "cache", "--no-progress", "--no-charts", "--out", tmp_path / "r")
        assert sum(1 for r in server.requests if _images(r)) == 2  # not 6 retries per image question
    s = load_summary(tmp_path / "r")
    assert code == 1 and "--text-only" in err
    assert s["outcomes"]["failed_by_reason"]["images"] == 6  # 2 TIU + 2 MIU + 2 MMR, none scored
    assert "lsu" in s["by_category"] and "tiu" not in s["by_category"]  # failures never scored


def test_cmd_judge_failures_are_left_out_and_counted(whodunitbench_anchor: Path, run_cli, tmp_path) -> None:
    def unreadable_judge(request: dict, n: int) -> str:
        return "I would rather not say." if "评委" in user_text(request) else _scripted(request, n)

    judge_prompt = tmp_path / "judge.txt"
    judge_prompt.write_text('你是评委。真相：{truth}\n玩家：{prediction}\n输出 {"score": 0-100}', encoding="utf-8")
    with OpenAITestServer(responder=unreadable_judge) as server:
        code, _, err = run_cli(
            whodunitbench_anchor / "XIAOHUA_example", "--format", "whodunitbench", "--model", "m",
            "--base-url", server.base_url, "--judge-prompt", judge_prompt, "--limit", "1",
            "--cache-dir", tmp_path / "cache", "--no-progress", "--no-charts", "--out", tmp_path / "r")
    s = load_summary(tmp_path / "r")
    cmd = s["by_category"]["cmd"]
    assert cmd["strict"] is None and cmd["outcomes"]["failed_by_reason"] == {"judge": 1}  # not a 0 averaged in
    assert code == 1 and "× judge" in err
