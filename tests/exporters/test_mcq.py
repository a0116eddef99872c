"""The inline-MCQ parser on every question string of the three WhodunitBench anchors, plus edge cases."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from exporters.whodunitbench.mcq import parse_inline_mcq, render_inline_mcq, strip_list_numbering

ANCHOR_GAMES = ["XIAOHUA_example", "DI7MI_2", "Pu"]


def squash(text: str) -> str:
    return "".join(text.split())


def question_lists(env: dict) -> dict[str, list[str]]:
    lists = {f"role:{r['name']}": r["q"] for r in env["role"]}
    lists["ei_q"] = env["ei_q"]["key_q"]
    lists["cxi_q"] = env["cxi_q"]["key_q"]
    lists["key_clues_questions"] = [item["q"] for item in env["key_clues_questions"]]
    lists["key_clue_q"] = env["key_clue_q"]["key_q"]
    return lists


@pytest.mark.parametrize("game", ANCHOR_GAMES)
def test_every_anchor_question_parses_and_renders_back(whodunitbench_anchor: Path, game: str):
    env = json.loads((whodunitbench_anchor / game / "env_p_all.json").read_text())
    sizes: Counter[int] = Counter()
    total = 0
    for name, items in question_lists(env).items():
        stripped, numbered = strip_list_numbering(items)
        for i, (raw, text) in enumerate(zip(items, stripped, strict=True), start=1):
            parsed = parse_inline_mcq(raw, i if numbered else None)
            assert parsed.problems == [], (name, raw)
            assert 2 <= len(parsed.options) <= 4, (name, raw)
            assert all(parsed.options), (name, raw)
            assert parsed.stem.endswith(("？", "?")), (name, raw)
            # every published string is well formed: render(parse(q)) == q modulo whitespace
            assert squash(render_inline_mcq(parsed.stem, parsed.options)) == squash(text), (name, raw)
            assert (parsed.number_prefix == f"{i}.") == numbered
            sizes[len(parsed.options)] += 1
            total += 1
    assert total > 350
    assert sizes[4] > 0.95 * total


def test_list_numbering_is_stripped_only_on_the_numbered_lists(whodunitbench_anchor: Path):
    numbered = {}
    for game in ANCHOR_GAMES:
        env = json.loads((whodunitbench_anchor / game / "env_p_all.json").read_text())
        for name, items in question_lists(env).items():
            numbered[(game, name)] = strip_list_numbering(items)[1]
    # whodunitbench.md §3: ei_q / cxi_q / key_clue_q in XIAOHUA and Pu, nothing else
    assert {k for k, v in numbered.items() if v} == {
        (g, n) for g in ("XIAOHUA_example", "Pu") for n in ("ei_q", "cxi_q", "key_clue_q")}


def test_pu_real_stems_starting_with_0_38_survive(whodunitbench_anchor: Path):
    env = json.loads((whodunitbench_anchor / "Pu/env_p_all.json").read_text())
    plain = [item["q"] for item in env["key_clues_questions"] if item["q"].startswith("0.38")]
    assert plain, "Pu has an unnumbered stem starting with 0.38"
    assert parse_inline_mcq(plain[0]).stem.startswith("0.38口径转轮手枪")
    stripped, numbered = strip_list_numbering(env["key_clue_q"]["key_q"])
    assert numbered
    assert any(s.startswith("0.38口径转轮手枪") for s in stripped)  # "29.0.38口径…" -> "0.38口径…"


def test_published_spelling_is_reproduced_exactly():
    raw = "夏晴天的尸检报告显示，她的死因是什么？a. 药物过量 b. 心脏麻痹 c. 脑溢血 d. 跳楼自杀"
    parsed = parse_inline_mcq(raw)
    assert parsed.stem == "夏晴天的尸检报告显示，她的死因是什么？"
    assert parsed.options == ["药物过量", "心脏麻痹", "脑溢血", "跳楼自杀"]
    assert render_inline_mcq(parsed.stem, parsed.options) == raw


@pytest.mark.parametrize(
    ("raw", "options"),
    [
        # glued to CJK punctuation and to CJK text: split only on the next expected letter
        ("这段监控说明了什么？a. 是一个密室。b. 有人接近过。c. 有过接触。d. 自然原因。",
         ["是一个密室。", "有人接近过。", "有过接触。", "自然原因。"]),
        ("哪个是暗号？a. “蜂蜜液”b. “鼠来宝”c. 都不是 d. 都是", ["“蜂蜜液”", "“鼠来宝”", "都不是", "都是"]),
        # option text containing letters, and a letter glued to CJK that is NOT the next expected
        ("桌上有哪些物品？a. 台灯 b. 书 c. 笔 d. a和b的所有物品", ["台灯", "书", "笔", "a和b的所有物品"]),
        ("哪一项？a. 见附件a. 的说明 b. 其他", ["见附件a. 的说明", "其他"]),
        # no spaces, double spaces, trailing spaces, space before a.
        ("左胸的伤口是什么凶器造成的？a.枪 b.棍 c.剑 d.没有伤口", ["枪", "棍", "剑", "没有伤口"]),
        ("时间是？a. 12点 b.18点  c. 16点 d. 14点", ["12点", "18点", "16点", "14点"]),
        ("什么时候会死亡？ a.16分钟后 b. 10分钟后 c. 17分钟后 d. 6分钟后 ", ["16分钟后", "10分钟后", "17分钟后", "6分钟后"]),
        # 2 and 3 options, English with letters inside words
        ("关系公开了吗？a. 是 b. 否", ["是", "否"]),
        ("谁在场？a. 甲 b. 乙 c. 丙", ["甲", "乙", "丙"]),
        ("What did Bob carry? a. a club. b. a bag c. a cab. d. nothing", ["a club.", "a bag", "a cab.", "nothing"]),
    ],
)
def test_irregular_spacing_and_gluing(raw: str, options: list[str]):
    parsed = parse_inline_mcq(raw)
    assert parsed.options == options
    assert parsed.problems == []


def test_bad_strings_give_problems_not_exceptions():
    for raw in ["", "没有选项的题目", "只有一个选项？a. 是", "no question mark a. x b. y"]:
        parsed = parse_inline_mcq(raw)
        assert parsed.problems, raw
    assert parse_inline_mcq("1.题目？a. x b. y", number=2).problems == ["expected the numbering prefix 2."]


def test_strip_list_numbering_needs_the_whole_list_in_order():
    assert strip_list_numbering(["1.甲？a. x b. y", "2.乙？a. x b. y"]) == (["甲？a. x b. y", "乙？a. x b. y"], True)
    assert strip_list_numbering(["1.甲", "3.乙"]) == (["1.甲", "3.乙"], False)
    assert strip_list_numbering(["1.甲", "乙"]) == (["1.甲", "乙"], False)
    assert strip_list_numbering(["0.38口径？a. 4 b. 5"]) == (["0.38口径？a. 4 b. 5"], False)
    assert strip_list_numbering([]) == ([], False)
