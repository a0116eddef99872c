"""read_whodunitbench on the three real anchors (counts of whodunitbench.md §8) and on the
irregularity fixtures (§9): everything imports with a report, nothing raises."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from casebook.interchange import Game, NodeKind, Origin, QuestionKind
from exporters.whodunitbench.layout import parse_source_level, split_reason
from exporters.whodunitbench.reader import read_whodunitbench

# §8, one row per anchor: roles, murderer idx, key_role n, LS n (distinct), TRI, MRI, MMR n,
# MMR level 0 `p` / role-only / level >= 1 (incl. `-n`), max hop, pool levelled / role-private, images
EXPECTED = {
    "XIAOHUA_example": dict(ju="XIAOHUA", roles=5, murderer=0, key_roles=2, ls=250, ls_distinct=223, tri=21, mri=17,
                            mmr=66, p=15, role_only=10, levelled=41, max_hop=6, pool=40, private=2, images=11),
    "DI7MI_2": dict(ju="DI7MI2", roles=6, murderer=0, key_roles=1, ls=323, ls_distinct=311, tri=28, mri=20,
                    mmr=33, p=20, role_only=0, levelled=13, max_hop=2, pool=21, private=0, images=5),
    "Pu": dict(ju="Pu", roles=4, murderer=3, key_roles=3, ls=190, ls_distinct=184, tri=27, mri=18,
               mmr=66, p=10, role_only=11, levelled=45, max_hop=7, pool=30, private=11, images=9),
}


@pytest.fixture(scope="module")
def anchor_games(whodunitbench_anchor: Path) -> dict[str, Game]:
    result = read_whodunitbench(whodunitbench_anchor)
    assert sorted(g.slug for g in result.games) == sorted(EXPECTED)
    # every per-game problem is also in the result's list
    for game in result.games:
        assert all(p in result.problems for p in game.report)
    assert not [p for p in result.problems if p.severity == "error"]
    return {g.slug: g for g in result.games}


@pytest.fixture(scope="module")
def irregular(fixtures_dir: Path):
    return read_whodunitbench(fixtures_dir / "irregular" / "whodunitbench" / "Dataset")


@pytest.mark.parametrize("slug", sorted(EXPECTED))
def test_anchor_counts_match_the_format_notes(anchor_games: dict[str, Game], slug: str):
    game, want = anchor_games[slug], EXPECTED[slug]
    assert game.slug == slug and game.title == want["ju"] and game.language == "zh"
    assert game.origin == Origin.WHODUNITBENCH
    players = game.playable
    assert len(players) == want["roles"]
    assert [c.is_murderer for c in players].index(True) == want["murderer"]
    assert sum(c.is_murderer for c in game.characters) == 1
    assert sum(c.key_role for c in players) == want["key_roles"]
    ls = game.questions_of(QuestionKind.LONG_SCRIPT)
    assert len(ls) == want["ls"] and len({(q.perspective, q.raw) for q in ls}) == want["ls_distinct"]
    assert len(game.questions_of(QuestionKind.TEXT_IMAGE)) == want["tri"]
    assert len(game.questions_of(QuestionKind.MEDIA_IMAGE)) == want["mri"]
    mmr = game.questions_of(QuestionKind.MULTI_STEP)
    assert len(mmr) == want["mmr"]
    assert sum(q.source == "p" for q in mmr) == want["p"]
    assert sum(q.level == 0 and q.source != "p" for q in mmr) == want["role_only"]
    assert sum(q.level is None or q.level >= 1 for q in mmr) == want["levelled"]
    pool = game.chains[0]
    assert pool.title == "Key clue pool" and len(pool.nodes) == want["pool"]
    assert max(n.level for n in pool.nodes) == want["max_hop"]
    assert len(game.key_statements) == want["private"]
    images = [c for c in game.clues if c.kind == "image"]
    assert len(images) == want["images"] and all(c.data and c.media_type for c in images)


def test_xiaohua_details(anchor_games: dict[str, Game]):
    game = anchor_games["XIAOHUA_example"]
    bai = game.character("白老师")
    assert bai.is_murderer and bai.self_intro.startswith("\n大家好，我是白老师") and bai.fixed_answer == "\n我不知道。我不是凶手。\n"
    assert bai.script.startswith("\n我是白老师")
    victim = game.character("夏晴天")  # task_nm starts "死者是夏晴天"
    assert victim.is_victim and not victim.playable and game.victims == ["夏晴天"]
    assert [(k.killer, k.victim) for k in game.kills] == [("白老师", "夏晴天")]
    assert [c.name for c in game.characters if c.key_role] == ["鬼学姐", "鸥学妹"]
    # the level histogram of the MMR questions (source grammar §2.3)
    mmr = game.questions_of(QuestionKind.MULTI_STEP)
    assert Counter(q.level for q in mmr) == {0: 25, 1: 12, 2: 9, 3: 6, 4: 5, 5: 4, 6: 5}
    first = mmr[0]
    assert first.extra["key_q"] == "1." + first.raw  # the numbered key_clue_q.key_q string
    assert first.stem == "夏晴天的尸检报告显示，她的死因是什么？" and first.answer == "b" and first.answer_letters == "b"
    assert first.raw == "夏晴天的尸检报告显示，她的死因是什么？a. 药物过量 b. 心脏麻痹 c. 脑溢血 d. 跳楼自杀"
    # numbered image lists: raw keeps "1.", stem does not
    tri = game.questions_of(QuestionKind.TEXT_IMAGE)[0]
    assert tri.raw.startswith("1.鬼学姐") and tri.stem.startswith("鬼学姐") and tri.extra["number_prefix"] == "1."
    ls = [q for q in game.questions_of(QuestionKind.LONG_SCRIPT) if q.perspective == "鸥学妹"]
    assert len(ls) == 50 and all(q.answer_letters == q.answer for q in ls)
    nodes = game.chains[0].nodes
    assert nodes[0].key == "p.1" and nodes[0].kind == NodeKind.DIRECT and nodes[0].extra["pool_key"] == "p"
    assert {n.kind for n in nodes if n.level >= 1} == {NodeKind.INFERRED}
    assert [k.owner for k in game.key_statements] == ["鬼学姐", "鸥学妹"]
    assert game.truth.text.startswith("\n2014年2月1日") and game.truth.motive == game.truth.method == ""
    assert game.task_prompts["civilian"].startswith("死者是夏晴天\n") and game.task_prompts["murderer"].startswith("请通过")
    assert game.public_clue_text == "\n"
    assert [c.filename for c in game.clues] == [f"{n}.png" for n in range(1, 12)]  # numeric, not 1, 10, 11, 2
    assert game.clues[0].key == "img/1.png" and game.clues[0].media_type == "image/png"
    messages = {p.message for p in game.report}
    assert "recorded agent outputs present" in messages
    assert "ignored: only env_p_all.json is authoritative" in messages  # env_p_update.json
    assert any("duplicated statement" in m for m in messages)
    assert any("no 作案动机：/作案手法： labels" in m for m in messages)


def test_pu_details(anchor_games: dict[str, Game]):
    game = anchor_games["Pu"]
    assert game.extra["whodunitbench"]["top_key_order"][0] == "role"
    # 唐•何塞 (U+2022) in key_role resolves to the role 唐·何塞 (U+00B7); the published string is kept
    assert game.character("唐·何塞").key_role
    assert game.extra["whodunitbench"]["key_role"][0] == "唐•何塞"
    assert any("唐•何塞" in p.message and "resolved" in p.message for p in game.report)
    assert {k.owner for k in game.key_statements} == {"旅人", "唐•何塞", "米里奥"}
    sources = {q.source: (q.level, q.extra["owners"]) for q in game.questions_of(QuestionKind.MULTI_STEP)}
    assert sources["p-n"] == (None, "p") and sources["all-3"] == (3, "all") and sources["t"] == (0, "t")
    assert sources["米里奥+旅人+何塞-4"] == (4, "米里奥+旅人+何塞")
    assert [c.media_type for c in game.clues] == ["image/jpeg"] * 9
    assert any(p.message == "image_1.png is really JPEG; kept the name, media type sniffed" for p in game.report)
    assert not game.victims  # Pu's task_nm names no victim
    murderer = game.character("占卜师")
    assert murderer.is_murderer and murderer.self_intro and game.extra["whodunitbench"]["murder"] == "占卜师"


def test_di7mi2_truth_is_split_into_motive_and_method(anchor_games: dict[str, Game]):
    truth = anchor_games["DI7MI_2"].truth
    assert truth.motive == "凶手仇恨死者"
    assert truth.method.startswith("密室是如何形成的")
    assert truth.text.startswith("\n作案动机：\n凶手仇恨死者\n\n作案手法：\n")


def test_source_and_reason_grammar():
    assert parse_source_level("p") == ("p", 0)
    assert parse_source_level("p-3") == ("p", 3)
    assert parse_source_level("l-p-1") == ("l-p", 1)
    assert parse_source_level("z-x-p-2") == ("z-x-p", 2)
    assert parse_source_level("p-n") == ("p", None)
    assert parse_source_level("旅人+米里奥-2") == ("旅人+米里奥", 2)
    assert split_reason("\n作案手法：\n下毒\n\n作案动机：\n复仇") == ("复仇", "下毒", True)
    assert split_reason("只有时间线") == ("", "", False)


def test_reader_accepts_one_game_folder_and_reports_bad_paths(whodunitbench_anchor: Path, tmp_path: Path):
    one = read_whodunitbench(whodunitbench_anchor / "Pu")
    assert [g.slug for g in one.games] == ["Pu"]
    missing = read_whodunitbench(tmp_path / "nope")
    assert missing.games == [] and missing.problems[0].message == "path does not exist"
    empty = read_whodunitbench(tmp_path)
    assert empty.games == [] and "no game folder found" in empty.problems[0].message
    (tmp_path / "file.json").write_text("{}")
    assert "not a folder" in read_whodunitbench(tmp_path / "file.json").problems[0].message


# -- irregularity fixtures (§9) --------------------------------------------------------------


def messages(result, slug: str) -> list[str]:
    return [f"{p.severity}|{p.file}|{p.location}|{p.message}" for p in result.problems if p.file.startswith(slug + "/")]


def test_irregular_fixtures_import_with_a_report(irregular):
    assert sorted(g.slug for g in irregular.games) == ["English", "Missing", "Orders"]
    broken = messages(irregular, "Broken")
    assert any(m.startswith("error|Broken/env_p_all.json|line 1") and "broken JSON" in m for m in broken)
    assert sum("ignored: only env_p_all.json is authoritative" in m for m in broken) == 2


def test_orders_fixture(irregular):
    game = next(g for g in irregular.games if g.slug == "Orders")
    report = messages(irregular, "Orders")
    assert game.extra["whodunitbench"]["role_key_orders"]["墨先生"] == [
        "name", "back", "r_q", "m", "self", "answer", "q", "a"]
    assert game.character("艾伦·坡").key_role and game.character("墨先生").key_role  # via 艾伦•坡
    assert any("'小黑' is neither a level nor a role name" in m for m in report)
    free = [q for q in game.questions if q.source == "p-n"][0]
    assert free.answer == "根据提供的信息无法确定，需要进一步分析" and free.answer_letters == ""
    assert any("is not one of the option letters" in m and "key_clues_questions[3]" in m for m in report)
    by_raw = {q.raw: q for q in game.questions}
    assert [o.text for o in by_raw["阁楼里有什么？a. 钟 b. 表c. 信 d. a和b的所有物品"].options] == [
        "钟", "表", "信", "a和b的所有物品"]
    assert any(p.location == "key_clue_q.key_q[4]" and "differs from key_clues_questions q" in p.message
               for p in game.report)
    assert [o.text for o in by_raw["白鸦送的是什么？a. 信 b. 包裹 c. 报纸"].options] == ["信", "包裹", "报纸"]
    assert len(by_raw["艾伦•坡看到了谁？a. 白鸦 b. 墨先生"].options) == 2
    assert by_raw["艾伦•坡看到了谁？a. 白鸦 b. 墨先生"].level == 2
    ei = game.questions_of(QuestionKind.TEXT_IMAGE)
    assert ei[1].raw == "2.0.38口径的钥匙挂在哪里？a. 门后 b. 桌上 c. 墙上 d. 口袋" and ei[1].stem.startswith("0.38口径")
    assert by_raw["0.38口径的钥匙能开几扇门？a. 1扇 b. 2扇 c. 3扇 d. 4扇"].stem.startswith("0.38口径")
    assert game.truth.method == "调慢怀表制造不在场证明" and game.truth.motive == "凶手仇恨死者"  # method first
    assert [c.filename for c in game.clues] == ["image_1.png", "image_2.png", "image_2(1).png", "image_10.png"]
    assert [c.media_type for c in game.clues] == ["image/jpeg", "image/png", "image/png", "image/jpeg"]
    assert any("image_1.png is really JPEG" in m for m in report)
    assert any("byte-identical to img/image_2(1).png" in m or "byte-identical to img/image_2.png" in m for m in report)
    assert any("recorded agent outputs present" in m for m in report)
    assert game.victims == ["钟表匠"]


def test_missing_fixture(irregular):
    game = next(g for g in irregular.games if g.slug == "Missing")
    report = [p for p in irregular.problems if p.file.startswith("Missing/")]
    for file, expected in [
        ("env_p_all.json", "missing key 'key_role'"), ("env_p_all.json", "missing key 'reason'"),
        ("env_p_all.json", "missing key 'ei_q'"), ("env_p_all.json", "murderer flag is '1', expected 0 or 1"),
        ("env_p_all.json", "role is not an object"),
        ("env_p_all.json", "murder '小乙' differs from the m == 1 role '老丙'"),
        ("env_p_all.json", "task_nm says 死者是 but names nobody"),
        ("env_p_all.json", "r_q of '大骄' does not mirror q/a"),
        ("env_p_all.json", "q is a str, not a list (draft format)"), ("env_p_all.json", "1 questions but 0 answers"),
        ("env_p_all.json", "no question mark and no option a."),
        ("env_p_all.json", "item is not an object with a string 'q'"),
        ("env_p_all.json", "key_clue_q has 2/2/2 items, key_clues_questions 1"),
        ("env_p_all.json", "pool key '大娇' is neither a level nor a role name"),
        ("env_p_update.json", "ignored: only env_p_all.json is authoritative"),
        ("img/image_3.jpg", "image cannot be decoded (truncated or corrupt)"),
        ("img/image_4.jpg", "not a supported image"),
        ("img", "numbering has gaps: image_1.jpg missing"),
    ]:
        assert any(p.file == f"Missing/{file}" and expected in p.message for p in report), (file, expected)
    assert {p.severity for p in report if p.file.startswith("Missing/img/")} == {"error"}
    assert [c.filename for c in game.clues] == ["image_2.jpg", "image_5.gif"]
    assert game.character("老丙").is_murderer and not game.character("小乙").is_murderer
    assert game.victims == []


def test_english_fixture_is_detected_as_english(irregular):
    game = next(g for g in irregular.games if g.slug == "English")
    assert game.language == "en"
    assert game.character("Mr. Ink").is_murderer and game.character("Mr. Ink").key_role
    assert any("no img/ folder" in m for m in messages(irregular, "English"))


def test_questions_survive_when_only_key_clue_q_is_left(tmp_path: Path):
    game_dir = tmp_path / "OnlyArrays"
    game_dir.mkdir()
    env = {"role": [{"name": "甲", "back": "我是甲", "m": 1, "q": [], "a": [], "r_q": []}],
           "key_clue_q": {"key_q": ["1.谁？a. 甲 b. 乙", "2.何时？a. 早 b. 晚"], "key_ans": ["a", "b"], "key_sc": ["p", "p-1"]}}
    (game_dir / "env_p_all.json").write_text(json.dumps(env))
    game = read_whodunitbench(game_dir).games[0]
    mmr = game.questions_of(QuestionKind.MULTI_STEP)
    assert [(q.stem, q.answer, q.level) for q in mmr] == [("谁？", "a", 0), ("何时？", "b", 1)]
    assert any("2 questions taken from key_clue_q" in p.message for p in game.report)


def test_known_aliases_become_character_aliases(anchor_games: dict[str, Game]):
    game = anchor_games["DI7MI_2"]
    assert game.character("达文西").name == "萨拉" and game.character("萨拉").aliases == ["达文西"]
