"""Recorded agent runs: the figures of whodunitbench.md §7 from the real XIAOHUA / DI7MI_2 logs,
the lenient answer-list parser on every published shape, and the irregular fixture."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from exporters.whodunitbench.agent_logs import (
    AgentRun,
    clean_agent_text,
    parse_answer_list,
    parse_perception,
    positional_score,
    read_agent_runs,
    split_motive_method,
)


def env(anchor: Path, slug: str) -> dict:
    return json.loads((anchor / slug / "env_p_all.json").read_text())


def runs_of(anchor: Path, slug: str) -> tuple[dict, list[AgentRun]]:
    game = env(anchor, slug)
    return game, read_agent_runs(anchor / slug, [r["name"] for r in game["role"]])


def test_xiaohua_run1_perception_scores(whodunitbench_anchor: Path):
    game, runs = runs_of(whodunitbench_anchor, "XIAOHUA_example")
    assert [(r.run, r.source) for r in runs] == [(1, "Agent_*.json"), (2, "Agent_*1.json")]
    run = runs[0]
    assert run.detectives == ["何痴情", "鬼学姐", "鸥学妹", "乔学长"]  # the murderer 白老师 is scripted
    tiu = [positional_score(p.simple_image, game["ei_q"]["key_ans"]) for p in run.perception.values()]
    miu = [positional_score(p.complex_image, game["cxi_q"]["key_ans"]) for p in run.perception.values()]
    assert tuple(map(sum, zip(*tiu, strict=True))) == (57, 84)  # 简单图片 = ei_q = TRI
    assert tuple(map(sum, zip(*miu, strict=True))) == (44, 68)  # 复杂图片 = cxi_q = MRI
    gull = next(r for r in game["role"] if r["name"] == "鸥学妹")
    assert positional_score(run.perception["鸥学妹"].long_text, gull["a"]) == (45, 50)
    # 何痴情 answered 38 of 50 LS questions; his last TRI answer carried "Content is blocked"
    assert len(run.perception["何痴情"].long_text) == 38
    assert run.perception["何痴情"].simple_image[20] == "a"
    # 乔学长 wrote "1.a 2.b 3.a …" on one line
    assert len(run.perception["乔学长"].long_text) == 34 and run.perception["乔学长"].long_text[:3] == ["a", "b", "a"]


def test_votes_targets_and_texts(whodunitbench_anchor: Path):
    game, runs = runs_of(whodunitbench_anchor, "XIAOHUA_example")
    for run in runs:  # 0/4 in both runs (murderer 白老师)
        assert len(run.votes) == 4 and sum(v == game["murder"] for v in run.votes.values()) == 0
    assert runs[0].votes == {"何痴情": "乔学长", "鬼学姐": "鬼学姐", "鸥学妹": "乔学长", "乔学长": "何痴情"}
    # ITD: the name after #x#. decides, never the letter (run 2 writes #c#.鸥学妹, and "#a# 白老师")
    assert runs[0].targets == ["何痴情", "何痴情", "何痴情", "白老师"]
    assert runs[1].targets == ["白老师", "鸥学妹", "乔学长", "白老师"]
    assert not set(game["key_role"]) & set(runs[0].targets)  # no key role was questioned in run 1
    first = runs[0].discussion[0]
    assert first.speaker == "何痴情" and first.is_question and first.question.startswith("何痴情，从你与晴天的关系中")
    assert first.clue_sharing.startswith("根据所提供的线索") and "提问玩家选项" not in first.clue_sharing
    assert runs[0].discussion[-1].speaker == "白老师" and runs[0].discussion[-1].text == "我不知道。我不是凶手。"
    assert all("Content is blocked" not in t.text for r in runs for t in r.discussion)
    assert runs[0].clues["何痴情"].endswith("可能的动机。")  # cut before 提问玩家选项
    reason = runs[0].reasons["鸥学妹"]
    assert reason.method.startswith("凶手利用了夏晴天对果汁的喜爱") and reason.motive.startswith("何痴情因为害怕")
    assert runs[0].reasons["鬼学姐"].method.startswith("结合所有线索")  # "**作案手法**：", not the prose mention
    assert runs[0].intro["何痴情"].startswith("大家好，我是何痴情")  # "何痴情:" label dropped
    assert runs[0].intro["白老师"].startswith("大家好，我是白老师")
    # run 2: multi-step answers in four shapes (question repeated, **bold**, "1.答案 d.")
    mmr_gold = [q["ans"] for q in game["key_clues_questions"]]
    assert [len(runs[1].mq[d]) for d in runs[1].detectives] == [50, 50, 64, 50]
    assert all(positional_score(runs[1].mq[d], mmr_gold)[0] >= 14 for d in runs[1].detectives)


def test_di7mi2_alias_votes_and_stale_mmr(whodunitbench_anchor: Path):
    game, runs = runs_of(whodunitbench_anchor, "DI7MI_2")
    assert len(runs) == 1
    run = runs[0]
    assert run.aliases == {"达文西": "萨拉"}  # detected: not a role, intro says 我是萨拉
    assert any("'达文西' is not a role" in p.message for p in run.problems)
    assert run.detectives == ["法里斯", "乔伊", "萨拉", "托马斯", "韦伯斯特"]
    assert sum(v == "罗尔夫" for v in run.votes.values()) == 3 and len(run.votes) == 5  # 3/5
    # recorded MMR answers follow the 35-question env_p.json: positional against env_p_all is 21/33
    assert len(run.mq["萨拉"]) == 35
    assert positional_score(run.mq["萨拉"], [q["ans"] for q in game["key_clues_questions"]]) == (21, 33)
    # unnumbered "question？d. answer" lines in the image sections
    assert len(run.perception["萨拉"].complex_image) == 20
    assert run.perception["托马斯"].simple_image == []  # a refusal
    assert run.targets == ["法里斯", "罗尔夫", "法里斯"]


def test_explicit_aliases_win(whodunitbench_anchor: Path):
    game = env(whodunitbench_anchor, "DI7MI_2")
    run = read_agent_runs(whodunitbench_anchor / "DI7MI_2", [r["name"] for r in game["role"]], {"达文西": "萨拉"})[0]
    assert "萨拉" in run.votes and not [p for p in run.problems if "达文西" in p.message]


@pytest.mark.parametrize(
    ("text", "letters"),
    [
        ("1. b\n2. c\n3. a", ["b", "c", "a"]),
        ("1.b\n2.d", ["b", "d"]),
        ("1.a 2.b 3.a 4.b", ["a", "b", "a", "b"]),
        ("1. d. 18岁\n2. b. M大", ["d", "b"]),
        ("1.答案 d. 跳楼自杀\n2.答案 c. 心脏病", ["d", "c"]),
        ("1. 楼上储物室内存放的不包括以下哪项？答案: **c. 生活日用品**\n2. 有几根尾巴？答案: **b. 3根**", ["c", "b"]),
        ("1. 夏晴天的死因是：d. 跳楼自杀\n2. 白老师还约了 **c. 夏晴天** 14点到天台。", ["d", "c"]),
        ("1. 4.601活动室的果汁开封了吗？b. 否\n2. 维生素C在哪？a. 桌上", ["b", "a"]),
        ("审片用的电脑桌上有哪些物品？d. a和b的所有物品\n门是如何上锁的？b. 关闭门后自动上锁", ["d", "b"]),
        ("1. b\n2. c\n4. a", ["b", "c", None, "a"]),  # a skipped number keeps positions aligned
        ("1. aContent is blocked\n2. c", ["a", "c"]),
        ("```python\nprint('1. a')\n```\n1. c\n2. d", ["c", "d"]),
        ("1. A poster of the school.\n2. c. Inside", [None, "c"]),
        ("Since I can't view the images, I cannot answer.", []),
        ("", []),
    ],
)
def test_parse_answer_list_shapes(text: str, letters: list):
    assert parse_answer_list(text) == letters


def test_parse_perception_sections_in_any_order():
    parsed = parse_perception("简单图片答案：\n1. a\n\n**长文本答案：**\n1. b\n2. c\n\n复杂图片答案:\n1.d")
    assert (parsed.long_text, parsed.complex_image, parsed.simple_image) == (["b", "c"], ["d"], ["a"])


def test_split_motive_method_any_order_and_english():
    assert (r := split_motive_method("作案手法：\n下毒\n\n作案动机：\n复仇Content is blocked")).method == "下毒"
    assert r.motive == "复仇"
    english = split_motive_method("作案手法 (Modus Operandi):\nPoison.\n\nMotive: revenge")
    assert (english.method, english.motive) == ("Poison.", "revenge")
    assert split_motive_method("").motive == ""


def test_clean_agent_text():
    assert clean_agent_text("答案Content is blocked") == "答案"
    assert clean_agent_text("前\n```python\nimport pytesseract\n```\n![file](https://x/y)\nResult: run success✅\n后") == "前\n\n\n\n后"


def test_irregular_agent_fixture(fixtures_dir: Path):
    folder = fixtures_dir / "irregular" / "whodunitbench" / "Dataset" / "Orders"
    game = json.loads((folder / "env_p_all.json").read_text())
    runs = read_agent_runs(folder, [r["name"] for r in game["role"]])
    assert [r.run for r in runs] == [1, 2]
    run = runs[0]
    assert run.aliases == {"乌鸦先生": "白鸦"}  # "我叫白鸦"
    crow = run.perception["白鸦"]
    assert crow.long_text == ["a", "b"] and crow.simple_image == ["b", "a"] and crow.complex_image == ["c"]
    allen = run.perception["艾伦·坡"]
    assert (allen.long_text, allen.complex_image, allen.simple_image) == (["a", "d", "b"], ["c"], ["b", "a"])
    assert run.mq["艾伦·坡"] == ["a", "b", None, "c"] and run.mq["白鸦"] == []
    assert run.votes == {"艾伦·坡": "墨先生", "白鸦": "艾伦·坡"}  # "#a#.艾伦•坡" (U+2022) resolves
    assert run.targets == ["墨先生", "艾伦·坡"]
    unknown = run.discussion[4]
    assert unknown.target is None and unknown.target_label == "无名氏"
    assert any("'无名氏' is not a role" in p.message for p in run.problems)
    assert run.discussion[5].speaker == "法官" and run.discussion[5].text == ""
    assert run.reasons["白鸦"].motive == "revenge." and run.reasons["白鸦"].method == "he slowed the clock."
    assert run.clues == {"艾伦·坡": "1. 线索分析分享：\n怀表停在十点。", "白鸦": ""}
    second = runs[1]
    assert any(p.file == "Agent_MQ1.json" and p.severity == "error" for p in second.problems)
    assert second.votes == {"艾伦·坡": "墨先生"}  # no #x#: the role named after 凶手是
    assert any("'路人' is not a role" in p.message for p in second.problems)


def test_folders_without_recordings(whodunitbench_anchor: Path, tmp_path: Path):
    assert read_agent_runs(whodunitbench_anchor / "Pu", ["旅人"]) == []
    assert read_agent_runs(tmp_path / "missing", ["旅人"]) == []


def test_bundle_is_read_when_agent_files_are_absent(whodunitbench_anchor: Path, tmp_path: Path):
    # gpt4_naive_agent.json bundles one run (intro, dis, vote, reason, per_q, M_q; no clue)
    (tmp_path / "gpt4_naive_agent.json").write_bytes((whodunitbench_anchor / "DI7MI_2/gpt4_naive_agent.json").read_bytes())
    game = env(whodunitbench_anchor, "DI7MI_2")
    runs = read_agent_runs(tmp_path, [r["name"] for r in game["role"]])
    assert [(r.run, r.source) for r in runs] == [(1, "gpt4_naive_agent.json")]
    assert sum(v == "罗尔夫" for v in runs[0].votes.values()) == 3 and runs[0].clues == {}
    assert runs[0].targets == ["法里斯", "罗尔夫", "法里斯"]


def test_vote_without_marker_finds_aliases_too(whodunitbench_anchor: Path, tmp_path: Path):
    (tmp_path / "Agent_vote.json").write_text(json.dumps({"法里斯": "我认为凶手是：达文西，因为她说谎了"}))
    (tmp_path / "Agent_intro.json").write_text(json.dumps({"达文西": "达文西:大家好，我叫萨拉。"}))
    run = read_agent_runs(tmp_path, ["罗尔夫", "法里斯", "萨拉"])[0]
    assert run.votes == {"法里斯": "萨拉"} and run.intro == {"萨拉": "大家好，我叫萨拉。"}
