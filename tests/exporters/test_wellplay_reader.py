"""WellPlay reader on the real anchors (G3 and G1, both languages) and on the irregular fixtures."""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from casebook.interchange import Game, Origin, QuestionKind, Relationship
from exporters.common import ReadResult
from exporters.wellplay.reader import read_wellplay
from exporters.wellplay.rows import parse_row

# (language, slug) -> title, note, per-character counts in character_name order, categories,
# relation sub-types (two / one / non_existent), points, victim, murderer, counterpart
EXPECTED = {
    ("zh", "罪恶（4人封闭）"): ("罪恶", "（4人封闭）", {"张村民": 13, "王村长": 6, "李警察": 11, "胡调研": 14},
                            (3, 20, 21), (16, 5, 0), 172, "赵慈善", "王村长", "Sin (4 people closed)"),
    ("en", "Sin (4 people closed)"): ("Sin", " (4 people closed)",
                                      {"Zhang Villager": 13, "Chief Wang": 6, "Officer Li": 11, "Hu Investigate": 14},
                                      (3, 20, 21), (16, 5, 0), 172, "Zhao Cishan", "Chief Wang", "罪恶（4人封闭）"),
    ("zh", "致命喷泉（4人封闭）"): ("致命喷泉", "（4人封闭）", {"何老六": 10, "慕北": 11, "张洁": 4, "王邻居": 11},
                              (3, 21, 12), (4, 0, 8), 159, "李国富", "张洁", "Deadly Fountain (4 people closed)"),
    ("en", "Deadly Fountain (4 people closed)"): ("Deadly Fountain", " (4 people closed)",
                                                  {"He Laoliu": 10, "Mu Bei": 11, "Zhang Jie": 4, "Neighbor Wang": 11},
                                                  (3, 21, 12), (4, 0, 8), 159, "Li Guofu", "Zhang Jie",
                                                  "致命喷泉（4人封闭）"),
}
LAYOUTS = {"G3": ".", "G1": "legacy-195be0c"}


@pytest.fixture(scope="module")
def reads(wellplay_anchor: Path) -> dict[str, ReadResult]:
    return {layout: read_wellplay(wellplay_anchor / sub) for layout, sub in LAYOUTS.items()}


def _games(result: ReadResult) -> dict[tuple[str, str], Game]:
    return {(g.language, g.slug): g for g in result.games}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_anchor_games_counts_and_truth(reads: dict[str, ReadResult], layout: str) -> None:
    games = _games(reads[layout])
    assert set(games) == set(EXPECTED)
    for key, (title, note, per_char, cats, rel_kinds, points, victim, murderer, counterpart) in EXPECTED.items():
        game = games[key]
        assert (game.title, game.title_note, game.origin) == (title, note, Origin.WELLPLAY)
        assert [c.name for c in game.playable] == list(per_char)
        assert Counter(q.perspective for q in game.questions) == Counter(per_char)
        assert [q.perspective for q in game.questions] == sorted(
            (q.perspective for q in game.questions), key=list(per_char).index
        )  # per-character files in character_name order
        kinds = Counter(q.kind for q in game.questions)
        assert (kinds[QuestionKind.OBJECTIVE], kinds[QuestionKind.REASONING], kinds[QuestionKind.RELATIONS]) == cats
        subs = Counter(q.sub_type for q in game.questions_of(QuestionKind.RELATIONS))
        assert (subs["two"], subs["one"], subs["non_existent"]) == rel_kinds
        assert sum(q.effective_weight for q in game.questions) == points
        assert all(q.weight is None for q in game.questions)
        assert game.victims == [victim]
        assert game.murderers == [murderer]
        assert [(k.killer, k.victim) for k in game.kills] == [(murderer, victim)]
        victim_char = game.character(victim)
        assert victim_char is not None and victim_char.is_victim and not victim_char.playable
        assert game.counterpart == counterpart
        # reasoning block per victim for each civilian: who/how/why/relationship/where/when/suspect
        civilians = len(per_char) - 1
        reasoning = Counter(q.sub_type for q in game.questions_of(QuestionKind.REASONING))
        assert all(reasoning[s] == civilians for s in ("how", "why", "relationship", "where", "when", "suspect"))
        assert Counter(q.sub_type for q in game.questions_of(QuestionKind.OBJECTIVE)) == {"who_killed": civilians}
        assert all(q.multi for q in game.questions if q.sub_type == "suspect")


def test_anchor_g3_reads_cleanly(reads: dict[str, ReadResult]) -> None:
    result = reads["G3"]
    assert [p for p in result.problems if p.severity != "info"] == []
    lines = [str(p) for p in result.problems]
    for agg in ("chinese/罪恶（4人封闭）/final_result/GM.csv", "english/Sin (4 people closed)/final_result/FSA.csv"):
        assert any(line.startswith(f"[info] {agg}: aggregate identical") and "44" in line for line in lines), agg
    # every game problem is in the game's report too
    for game in result.games:
        assert all(p in result.problems for p in game.report)


def test_script_question_details(reads: dict[str, ReadResult]) -> None:
    game = _games(reads["G3"])[("zh", "罪恶（4人封闭）")]
    villager = game.character("张村民")
    assert villager.script.startswith("张村民\n2015年") and "\\n" not in villager.script
    assert "\\n" in villager.extra["wellplay"]["script_raw"][0]  # published form kept for export
    assert villager.extra["wellplay"]["questions"] == [] and villager.extra["wellplay"]["keys"][0] == "acts_num"
    first = game.questions[0]
    assert first.provenance == {"file": "chinese/罪恶（4人封闭）/final_result/张村民.csv", "line": 2}
    assert (first.kind, first.sub_type, first.stem, first.answer) == (
        QuestionKind.OBJECTIVE, "who_killed", "赵慈善被谁杀死的？", "b")
    assert [o.text for o in first.options] == ["李警察", "王村长", "胡调研"]
    assert [o.correct for o in first.options] == [False, True, False]
    assert game.extra["wellplay"]["script_info"]["character_name"] == ["张村民", "王村长", "李警察", "胡调研"]
    en = _games(reads["G3"])[("en", "Sin (4 people closed)")]
    where = next(q for q in en.questions if q.sub_type == "where")
    assert [o.text for o in where.options][1] == "ashore"  # "ashore " stripped
    relation = next(q for q in en.questions if q.kind == QuestionKind.RELATIONS)
    assert relation.extra["option_labels"][0] == {
        "subject": "Hu Investigate", "labels": ["dislike of x", "acquaintance of x"], "object": "Chief Wang"}


def test_g1_import_equals_g3_import(reads: dict[str, ReadResult]) -> None:
    g1, g3 = _games(reads["G1"]), _games(reads["G3"])

    def content(game: Game) -> tuple:
        chars = [(c.name, c.script, c.goals, c.is_murderer, c.is_victim,
                  {k: v for k, v in c.extra.get("wellplay", {}).items()}) for c in game.playable]
        questions = [(q.kind, q.sub_type, q.stem, [(o.text, o.correct) for o in q.options], q.answer, q.multi,
                      q.perspective, q.provenance["line"]) for q in game.questions]
        return chars, questions, game.victims, game.kills, game.extra["wellplay"]["script_info"], game.counterpart

    for key in EXPECTED:
        assert content(g1[key]) == content(g3[key]), key
    assert g1[("zh", "罪恶（4人封闭）")].extra["wellplay"]["g1_id"] == "131"


def test_g1_relationship_graph(reads: dict[str, ReadResult], wellplay_anchor: Path) -> None:
    games = _games(reads["G1"])
    for slug, edges in (("罪恶（4人封闭）", 28), ("致命喷泉（4人封闭）", 25)):
        game = games[("zh", slug)]
        folder = wellplay_anchor / "legacy-195be0c" / "chinese" / f"{game.extra['wellplay']['g1_id']}-{slug}"
        graph = json.loads((folder / "all.json").read_text("utf-8"))
        assert len(game.relationships) == edges == sum(len(v) for v in graph.values())
        for rel in game.relationships:  # every edge present, labels split and lowercase
            assert [rel.target, ", ".join(rel.labels)] in graph[rel.source]
        people = set(graph) | {t for v in graph.values() for t, _ in v}
        assert {c.name for c in game.characters} == people
        qa = json.loads((folder / "qa-character.json").read_text("utf-8"))
        assert game.extra["wellplay"]["qa_character"] == qa
    sin = games[("zh", "罪恶（4人封闭）")]
    assert Relationship("王村长", "胡调研", ["dislike of x", "acquaintance of x"]) in sin.relationships
    assert not sin.character("杀人狂").playable and not sin.character("张村民的父亲").playable
    # G1 extras were compared with the JSON and reported, not imported
    lines = [str(p) for p in sin.report]
    assert any("relation_张村民.csv: equal to the 6 relation rows" in line for line in lines)
    assert any("txt_full/" in line and "JSON kept (authoritative)" in line for line in lines)
    en = games[("en", "Sin (4 people closed)")]
    assert any("final_result_before" in p.file and p.action == "not imported" for p in en.report)
    assert any("txt/: 4 file(s) equal to the JSON" in p.message for p in en.report)


@pytest.mark.parametrize(
    ("cells", "options", "truth", "note"),
    [
        (["b", "a", "Q", "o1", "o2", "o3", "o4", "", "b"], ["o1", "o2", "o3", "o4"], "b", None),
        (["b", "a", "Q", "o1", "o2", "o3", "o4", "", "b", ""], ["o1", "o2", "o3", "o4"], "b", "10 fields"),
        (["b", "a", "Q", "o1", "o2", "o3", "o4", "b"], ["o1", "o2", "o3", "o4"], "b", "column e holds"),
        (["b", "a", "Q", "o1", "o2", "", "", "b", ""], ["o1", "o2"], "b", "column e holds"),
        (["b", "a", "Q", "o1", "o2", "o3", "", "", "bb"], ["o1", "o2", "o3"], "bb", "repeats a letter"),
        (["b", "a", "Q", "o1", "o2", "o3", "", "", "AC"], ["o1", "o2", "o3"], "ac", "uppercase truth"),
        (["C", "A", "Q", " o1 ", "o2", "", "", "", ""], ["o1", "o2"], "", "no truth"),
    ],
)
def test_parse_row_repairs(cells: list[str], options: list[str], truth: str, note: str | None) -> None:
    row = parse_row(cells, 7)
    assert (row.options, row.truth, row.line) == (options, truth, 7)
    messages = " | ".join(m for m, _, _ in row.notes)
    if note:
        assert note in messages
    else:
        assert row.notes == []


def test_parse_row_blank_and_bad_value() -> None:
    assert parse_row([], 3) is None and parse_row(["", " "], 3) is None
    bad = parse_row(["x", "a", "Q", "o", "", "", "", "", "a"], 4)
    assert bad.value == "" and "unknown value" in bad.notes[0][0]


# --------------------------------------------------------------------------------------------
# Irregular fixtures (invented text in the shapes of wellplay.md §9)


@pytest.fixture(scope="module")
def irregular(fixtures_dir: Path) -> ReadResult:
    return read_wellplay(fixtures_dir / "irregular" / "wellplay")


def _has(result: ReadResult, file_end: str, text: str, action: str = "", location: str = "",
         severity: str | None = None) -> bool:
    return any(
        p.file.endswith(file_end) and text in p.message and action in p.action and location in p.location
        and (severity is None or p.severity == severity)
        for p in result.problems
    )


def test_irregular_folder_reports_every_irregularity(irregular: ReadResult) -> None:
    r = irregular
    fog = "雾港疑案（3人封闭）"
    expectations = [
        (f"{fog}/final_result/林·小雨.csv", "8 fields instead of 9", "", "line 5"),
        (f"{fog}/final_result/林·小雨.csv", "column e holds the letter 'b'", "read 'b' as the truth", "line 5"),
        (f"{fog}/final_result/林·小雨.csv", "10 fields instead of 9", "empty surplus fields dropped", "line 6"),
        (f"{fog}/final_result/林·小雨.csv", "uppercase letters", "read as lowercase", "line 2"),
        (f"{fog}/final_result/林·小雨.csv", "UTF-8 BOM", "ignored", ""),
        (f"{fog}/final_result/林·小雨.csv", "blank line(s) 4", "skipped", ""),
        (f"{fog}/final_result/林·小雨.csv", "no final newline", "", ""),
        (f"{fog}/final_result/周明.csv", "truth 'bb' repeats a letter", "option(s) 'b' marked correct", "line 3"),
        (f"{fog}/final_result/周明.csv", "2 accepted answers 'ac'", "all marked correct", "line 2"),
        (f"{fog}/final_result/周明.csv", "duplicate option texts ['雇员']", "kept as published", "line 3"),
        (f"{fog}/final_result/周明.csv", "blank question text", "empty stem", "line 4"),
        (f"{fog}/final_result/周明.csv", "leading/trailing spaces", "stripped", ""),
        (f"{fog}/final_result/陈伯.csv", "unexpected header", "file skipped", "line 1"),
        (f"{fog}/json/陈伯.json", "not valid JSON", "file skipped", "line 4"),
        (f"{fog}/json/周明.json", "missing key(s) questions", "kept missing", ""),
        (f"{fog}/json/林•小雨.json", "file name differs from character_name", "matched by name", ""),
        (f"{fog}/json/林•小雨.json", "literal \\n", "read as newlines", ""),
        (f"{fog}/final_result/GM.csv", "only in the aggregate", "not imported", ""),
        ("旧宅（2人）/json/script_info.json", "3 of 8 keys (G2 layout)", "engine defaults", ""),
        ("旧宅（2人）/json/乙女士.json", "only 5 of 10 keys (G2 layout)", "defaults written on export", ""),
        ("旧宅（2人）/json/乙女士.json", "own victims list ['管家']", "kept for this character", ""),
        ("201-灯塔（2人）/purpose/艾琳•怀特.txt", "middle-dot variant", "kept 艾琳·怀特.txt", ""),
        ("201-灯塔（2人）/txt_full/艾琳•怀特.txt", "middle-dot variant); contents differ", "kept 艾琳·怀特.txt", ""),
        ("201-灯塔（2人）/txt_full/老马.txt", "differs from the JSON of 老马", "JSON kept", ""),
        ("201-灯塔（2人）/final_result/relation_老马.csv", "differs from the relation rows", "not imported", ""),
        ("201-灯塔（2人）/purpose copy", "stale backup", "not imported", ""),
    ]
    missing = [e for e in expectations if not _has(r, *e)]
    assert missing == []
    assert all(p.action for p in r.problems)  # every line says what was done
    errors = sorted(p.file for p in r.problems if p.severity == "error")
    assert errors == [f"chinese/{fog}/final_result/陈伯.csv", f"chinese/{fog}/json/陈伯.json"]


def test_irregular_folder_imports_the_sound_data(irregular: ReadResult) -> None:
    games = _games(irregular)
    assert set(games) == {("zh", "雾港疑案（3人封闭）"), ("en", "Harbor Fog (3 people closed)"), ("zh", "旧宅（2人）"),
                          ("zh", "灯塔（2人）")}
    fog = games[("zh", "雾港疑案（3人封闭）")]
    assert [c.name for c in fog.playable] == ["林·小雨", "周明", "陈伯"]
    assert fog.character("林•小雨").script == "林·小雨\n我是港口小报的记者。那晚我在码头等末班船。"
    assert fog.character("陈伯").script == ""  # unreadable file: character kept, nothing invented
    assert "questions" not in fog.character("周明").extra["wellplay"]  # missing stays distinct from []
    assert fog.character("林·小雨").extra["wellplay"]["questions"] == []
    assert [(k.killer, k.victim) for k in fog.kills] == [("周明", "孙老板")]
    assert Counter(q.perspective for q in fog.questions) == {"林·小雨": 5, "周明": 4}
    by_line = {(q.perspective, q.provenance["line"]): q for q in fog.questions}
    upper = by_line[("林·小雨", 2)]
    assert (upper.kind, upper.multi, upper.sub_type) == (QuestionKind.OBJECTIVE, False, "who_killed")
    shifted = by_line[("林·小雨", 5)]
    assert ([o.text for o in shifted.options], shifted.answer, shifted.answer_letters) == (
        ["码头", "仓库", "灯塔"], "b", "b")
    assert shifted.sub_type == "where"
    ragged = by_line[("林·小雨", 6)]
    assert ([o.text for o in ragged.options], ragged.answer, ragged.sub_type) == (
        ["情杀", "仇杀", "利益", "误杀"], "b", "why")
    two = by_line[("周明", 2)]
    assert (two.answer, two.answer_letters, [o.text for o in two.options][1]) == ("ac", "ac", "见朋友")
    bb = by_line[("周明", 3)]
    assert (bb.answer, bb.answer_letters, [o.text for o in bb.options]) == ("bb", "b", ["雇员", "儿子", "朋友", "雇员"])
    assert by_line[("周明", 4)].stem == ""
    assert by_line[("周明", 5)].sub_type == "non_existent"
    assert by_line[("林·小雨", 7)].sub_type == "two"
    # counterpart found by the rule (not a published pair): same characters count and question sequence
    assert fog.counterpart == "Harbor Fog (3 people closed)"
    assert games[("en", "Harbor Fog (3 people closed)")].counterpart == fog.slug
    en_lin = games[("en", "Harbor Fog (3 people closed)")].character("Lin Xiaoyu")
    assert en_lin.goals == ["Find who killed Boss Sun.\nTip: mind the tide."]  # "\ n" normalised
    old = games[("zh", "旧宅（2人）")]
    assert old.extra["wellplay"]["layout"] == "G2" and old.victims == ["丙管家"]
    assert [(k.killer, k.victim) for k in old.kills] == [("乙女士", "丙管家")]  # own list ['管家'] aligned
    assert old.character("乙女士").extra["wellplay"]["victims"] == ["管家"]
    lighthouse = games[("zh", "灯塔（2人）")]
    assert lighthouse.extra["wellplay"]["layout"] == "G1" and len(lighthouse.relationships) == 5
    assert not lighthouse.character("渔夫").playable


def test_bad_paths_never_raise(tmp_path: Path, fixtures_dir: Path) -> None:
    missing = read_wellplay(tmp_path / "nope")
    assert missing.games == [] and missing.problems[0].severity == "error"
    # a lone game folder outside chinese/: language detected from the CJK content
    lone = tmp_path / "雾港疑案（3人封闭）"
    shutil.copytree(fixtures_dir / "irregular" / "wellplay" / "chinese" / "雾港疑案（3人封闭）", lone)
    result = read_wellplay(lone)
    assert [(g.language, g.slug) for g in result.games] == [("zh", "雾港疑案（3人封闭）")]
    assert result.games[0].questions[0].provenance["file"] == "final_result/林·小雨.csv"
    # a language folder
    english = read_wellplay(fixtures_dir / "irregular" / "wellplay" / "english")
    assert [(g.language, len(g.questions)) for g in english.games] == [("en", 11)]
    # a game whose files are garbage: reported, nothing raised
    broken = tmp_path / "chinese" / "坏（1人）"
    (broken / "json").mkdir(parents=True)
    (broken / "json" / "script_info.json").write_bytes(b"\xff\xfe garbage")
    (broken / "final_result").mkdir()
    (broken / "final_result" / "x.csv").write_text('value,type\n"unterminated', encoding="utf-8")
    result = read_wellplay(tmp_path)
    assert any(p.severity == "error" and "neither UTF-8 nor GB18030/GBK" in p.message for p in result.problems)
