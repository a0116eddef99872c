"""write_whodunitbench: byte-identical round trips of the real anchors and the irregular fixture,
edited questions rendered, new games written in the published shape and read back."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from casebook.interchange import (
    ChainNode,
    Character,
    Clue,
    Game,
    KeyStatement,
    Kill,
    NodeKind,
    Option,
    Question,
    QuestionKind,
    ReasoningChain,
    TruthManual,
)
from exporters.whodunitbench.reader import read_whodunitbench
from exporters.whodunitbench.writer import write_whodunitbench

ANCHORS = ["XIAOHUA_example", "DI7MI_2", "Pu"]


@pytest.fixture(scope="module")
def anchor_games(whodunitbench_anchor: Path) -> dict[str, Game]:
    return {g.slug: g for g in read_whodunitbench(whodunitbench_anchor).games}


def written_env(out: Path, slug: str) -> dict:
    return json.loads((out / "Dataset" / slug / "env_p_all.json").read_text(encoding="ascii"))


@pytest.mark.parametrize("slug", ANCHORS)
def test_anchor_round_trip_is_byte_identical(whodunitbench_anchor: Path, anchor_games, tmp_path: Path, slug: str):
    paths = write_whodunitbench([anchor_games[slug]], tmp_path)
    original = (whodunitbench_anchor / slug / "env_p_all.json").read_bytes()
    written = (tmp_path / "Dataset" / slug / "env_p_all.json").read_bytes()
    assert written == original
    assert json.loads(written) == json.loads(original)
    images = sorted((whodunitbench_anchor / slug / "img").iterdir())
    assert len(paths) == 1 + len(images)
    for image in images:
        assert (tmp_path / "Dataset" / slug / "img" / image.name).read_bytes() == image.read_bytes()


def test_irregular_fixture_round_trips_byte_identical(fixtures_dir: Path, tmp_path: Path):
    root = fixtures_dir / "irregular" / "whodunitbench" / "Dataset"
    games = {g.slug: g for g in read_whodunitbench(root).games}
    write_whodunitbench([games["Orders"], games["English"]], tmp_path)
    for slug in ("Orders", "English"):  # Pu-like key order, BOLIWU-like role order, •, numbering, 0.38
        assert (tmp_path / "Dataset" / slug / "env_p_all.json").read_bytes() == (root / slug / "env_p_all.json").read_bytes()
    for image in (root / "Orders" / "img").iterdir():
        assert (tmp_path / "Dataset/Orders/img" / image.name).read_bytes() == image.read_bytes()
    # the irregular file is normalised: mirrors rebuilt, missing keys written, bad items dropped
    write_whodunitbench([games["Missing"]], tmp_path)
    env = written_env(tmp_path, "Missing")
    assert list(env)[-3:] == ["ei_q", "key_role", "reason"]
    assert env["key_clue_q"] == {"key_q": ["谁说谎了？a. 甲 b. 乙"], "key_ans": ["b"], "key_sc": ["p-2"]}
    assert env["murder"] == "老丙" and [r["m"] for r in env["role"]] == [0, 0, 1]
    assert env["role"][0]["r_q"] == [{"q": env["role"][0]["q"][0], "ans": "b"}]


def test_writing_twice_gives_the_same_bytes(anchor_games, tmp_path: Path):
    game = anchor_games["Pu"]
    write_whodunitbench([game], tmp_path / "one")
    write_whodunitbench([game], tmp_path / "two")
    for a in sorted((tmp_path / "one").rglob("*")):
        b = tmp_path / "two" / a.relative_to(tmp_path / "one")
        assert a.is_dir() or a.read_bytes() == b.read_bytes()


def test_edited_questions_are_rendered(whodunitbench_anchor: Path, tmp_path: Path):
    game = read_whodunitbench(whodunitbench_anchor / "XIAOHUA_example").games[0]
    # an LS question of 鸥学妹: raw cleared (edited in Casebook), option text and answer changed
    ls = [q for q in game.questions_of(QuestionKind.LONG_SCRIPT) if q.perspective == "鸥学妹"][0]
    ls.raw = ""
    ls.options[0].text = "十九岁"
    for i, option in enumerate(ls.options):
        option.correct = i == 0
    # an image question of the numbered ei_q list and an MMR question (key_clue_q is numbered)
    tri = game.questions_of(QuestionKind.TEXT_IMAGE)[2]
    tri.raw, tri.stem = "", "改过的题干？"
    mmr = game.questions_of(QuestionKind.MULTI_STEP)[1]
    mmr.raw = ""
    mmr.options = mmr.options[:2]
    write_whodunitbench([game], tmp_path)
    env = written_env(tmp_path, "XIAOHUA_example")
    original = json.loads((whodunitbench_anchor / "XIAOHUA_example/env_p_all.json").read_text())
    role = next(r for r in env["role"] if r["name"] == "鸥学妹")
    expected = f"{ls.stem}a. 十九岁 b. {ls.options[1].text} c. {ls.options[2].text} d. {ls.options[3].text}"
    assert role["q"][0] == expected and role["a"][0] == "a"
    assert role["r_q"][0] == {"q": expected, "ans": "a"}
    assert role["q"][1:] == next(r for r in original["role"] if r["name"] == "鸥学妹")["q"][1:]
    assert env["ei_q"]["key_q"][2].startswith("3.改过的题干？a. ")  # numbering kept on the edited item
    assert env["ei_q"]["key_q"][3] == original["ei_q"]["key_q"][3]
    two = f"{mmr.stem}a. {mmr.options[0].text} b. {mmr.options[1].text}"
    assert env["key_clues_questions"][1]["q"] == two
    assert env["key_clue_q"]["key_q"][1] == f"2.{two}"
    # everything else is still as published
    for key in ("key_clues_pool", "role-q", "cxi_q", "ju_name", "task_nm", "task_m", "key_role", "murder", "reason"):
        assert env[key] == original[key], key


def test_deleted_and_edited_items_keep_the_file_consistent(whodunitbench_anchor: Path, tmp_path: Path):
    game = read_whodunitbench(whodunitbench_anchor / "Pu").games[0]
    tri = game.questions_of(QuestionKind.TEXT_IMAGE)
    game.questions.remove(tri[0])  # the numbered list is renumbered 1..N
    mmr = game.questions_of(QuestionKind.MULTI_STEP)
    game.questions.remove(mmr[0])  # and so is key_clue_q.key_q
    game.character("米里奥").key_role = False  # key_role falls back to the flags (role order)
    game.truth.motive, game.truth.method = "解脱", "射击"
    game.key_statements.append(KeyStatement(owner="唐·何塞", text="新的线索"))  # joins the published 唐•何塞 key
    write_whodunitbench([game], tmp_path)
    env = written_env(tmp_path, "Pu")
    assert [s.split(".", 1)[0] for s in env["ei_q"]["key_q"]] == [str(i) for i in range(1, 27)]
    assert env["ei_q"]["key_q"][0].startswith("1.") and env["ei_q"]["key_q"][0][2:] == tri[1].raw[2:]
    assert env["key_clue_q"]["key_q"][:2] == [f"1.{mmr[1].raw}", f"2.{mmr[2].raw}"]
    assert env["key_role"] == ["旅人", "唐·何塞"]
    assert env["reason"] == "\n作案动机：\n解脱\n\n作案手法：\n射击"
    assert env["key_clues_pool"]["唐•何塞"][-1] == "新的线索" and "唐·何塞" not in env["key_clues_pool"]


def test_a_game_made_in_casebook_is_written_in_the_published_shape(tmp_path: Path):
    ls = Question(kind=QuestionKind.LONG_SCRIPT, stem="你昨晚在哪？", perspective="林青",
                  options=[Option("书房", correct=True), Option("花园"), Option("厨房"), Option("门口")])
    mmr = Question(kind=QuestionKind.MULTI_STEP, stem="谁调换了药？", level=1,
                   options=[Option("林青"), Option("周墨", correct=True)])
    chain = ReasoningChain(goal="murderer", title="谁是凶手", nodes=[
        ChainNode(key="n1", kind=NodeKind.DIRECT, text="药瓶被调换过"),
        ChainNode(key="n2", kind=NodeKind.INFERRED, text="周墨接触过药瓶", parents=["n1"]),
        ChainNode(key="n3", kind=NodeKind.CONCLUSION, text="周墨是凶手", parents=["n2", "n1"]),
    ])
    game = Game(
        slug="新案子", title="新案子", language="zh",
        characters=[Character("林青", script="我是林青。", key_role=True),
                    Character("周墨", script="我是周墨。", is_murderer=True, self_intro="大家好，我是周墨"),
                    Character("白先生", playable=False, is_victim=True)],
        victims=["白先生"], kills=[Kill("周墨", "白先生")], questions=[ls, mmr], chains=[chain],
        key_statements=[KeyStatement(owner="林青", text="我看到周墨进了书房")],
        truth=TruthManual(motive="复仇", method="调换药物"),
        clues=[Clue(key="img/card.png", kind="image", filename="card.png", data=b"\x89PNG\r\n\x1a\nfake")],
    )
    paths = write_whodunitbench([game], tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == ["Dataset/新案子/env_p_all.json", "Dataset/新案子/img/card.png"]
    raw = (tmp_path / "Dataset/新案子/env_p_all.json").read_bytes()
    assert raw.isascii() and b"\n" not in raw  # json.dumps defaults: one line, \\u escapes
    env = json.loads(raw)
    assert list(env) == ["key_clues_pool", "role-q", "public_clue", "key_clues_questions", "role", "key_clue_q",
                         "ei_q", "cxi_q", "ju_name", "task_nm", "task_m", "key_role", "murder", "reason"]
    assert env["key_clues_pool"] == {"p": ["药瓶被调换过"], "1-step": ["周墨接触过药瓶"], "2-step": ["周墨是凶手"],
                                     "林青": ["我看到周墨进了书房"]}
    assert [list(r) for r in env["role"]] == [["name", "back", "r_q", "m", "q", "a"],
                                             ["name", "back", "r_q", "self", "answer", "m", "q", "a"]]
    assert env["role"][0]["q"] == ["你昨晚在哪？a. 书房 b. 花园 c. 厨房 d. 门口"] and env["role"][0]["a"] == ["a"]
    assert env["key_clues_questions"] == [{"q": "谁调换了药？a. 林青 b. 周墨", "ans": "b", "source": "p-1"}]
    assert env["task_nm"].startswith("死者是白先生\n请通过手头上的所有线索完成以下任务")
    assert env["key_role"] == ["林青"] and env["murder"] == "周墨"
    assert env["reason"] == "\n作案动机：\n复仇\n\n作案手法：\n调换药物"
    # and it reads back as the same game
    back = read_whodunitbench(tmp_path / "Dataset").games[0]
    assert back.slug == "新案子" and back.victims == ["白先生"] and back.character("周墨").is_murderer
    assert [q.answer for q in back.questions] == ["a", "b"] and back.questions[1].level == 1
    assert [n.level for n in back.chains[0].nodes] == [0, 1, 2]


@pytest.mark.parametrize("slug", ["", "../escape", "a/b", " padded"])
def test_unusable_slugs_are_refused_before_writing(tmp_path: Path, slug: str):
    with pytest.raises(ValueError, match="cannot be used as a folder name"):
        write_whodunitbench([Game(slug=slug, title="t", language="zh")], tmp_path)
    assert not any(tmp_path.iterdir())


def test_duplicate_slugs_are_refused(tmp_path: Path):
    games = [Game(slug="Ma1", title="MA1", language="zh"), Game(slug="ma1", title="MA1", language="zh")]
    with pytest.raises(ValueError, match="same folder"):
        write_whodunitbench(games, tmp_path)
    assert not any(tmp_path.iterdir())
