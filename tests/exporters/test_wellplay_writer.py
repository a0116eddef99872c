"""WellPlay writer: anchors reproduced (reader -> writer vs the published files), reader -> writer ->
reader identity, determinism, edits, relation options rendered from labels, G1 extras."""
from __future__ import annotations

import copy
import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from casebook.interchange import Character, Game, Kill, Option, Question, QuestionKind, Relationship
from exporters.wellplay import read_wellplay, write_wellplay
from exporters.wellplay.writer import HEADER

# ------------------------------------------------------------------ independent normalisation helpers


def _rows(path: Path) -> list[tuple]:
    """CSV rows as the published data means them: BOM and blank lines dropped, cells stripped, the
    shifted-truth rule applied (truth letter found in the last filled option cell)."""
    out = []
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh)
        assert next(reader) == HEADER
        for row in reader:
            if not any(c.strip() for c in row):
                continue
            cells = [c.strip() for c in row]
            value, qtype, question, rest = cells[0].lower(), cells[1].lower(), cells[2], cells[3:]
            truth = rest[5] if len(rest) == 6 else ""
            options = rest[:5]
            if not truth:
                filled = [c for c in rest]
                while filled and not filled[-1]:
                    filled.pop()
                truth, options = filled[-1], filled[:-1]
            while options and not options[-1]:
                options.pop()
            out.append((value, qtype, question, tuple(options), truth))
    return out


def _unescape(value):
    if isinstance(value, str):
        return value.replace("\\ n", "\n").replace("\\n", "\n")
    if isinstance(value, list):
        return [_unescape(v) for v in value]
    if isinstance(value, dict):
        return {k: _unescape(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def g3_written(wellplay_anchor: Path, tmp_path_factory: pytest.TempPathFactory):
    games = read_wellplay(wellplay_anchor).games
    out = tmp_path_factory.mktemp("wellplay_out")
    files = write_wellplay(games, out)
    return games, out, files


def test_writer_reproduces_the_published_files(wellplay_anchor: Path, g3_written) -> None:
    games, out, files = g3_written
    assert len(files) == 4 * (1 + 4 + 4 + 2)
    compared = Counter()
    for lang in ("chinese", "english"):
        for game_dir in sorted((wellplay_anchor / lang).iterdir()):
            mine = out / lang / game_dir.name
            info = json.loads((game_dir / "json" / "script_info.json").read_text("utf-8"))
            written_info_text = (mine / "json" / "script_info.json").read_text("utf-8")
            assert json.loads(written_info_text) == info
            assert list(json.loads(written_info_text)) == list(info)  # key order kept
            assert '    "agent_num": 4' in written_info_text  # 4-space indent
            names = info["character_name"]
            for name in names:
                published = json.loads((game_dir / "json" / f"{name}.json").read_text("utf-8"))
                written = json.loads((mine / "json" / f"{name}.json").read_text("utf-8"))
                assert written == published  # unedited: the raw strings come back exactly
                assert _unescape(written) == _unescape(published)
                assert list(written) == list(published)
                assert _rows(mine / "final_result" / f"{name}.csv") == _rows(game_dir / "final_result" / f"{name}.csv")
                compared["characters"] += 1
            concatenation = [r for n in names for r in _rows(mine / "final_result" / f"{n}.csv")]
            published_agg = next(p for p in (game_dir / "final_result" / n for n in ("GM.csv", "FSA.csv")) if p.exists())
            for agg in ("GM.csv", "FSA.csv"):
                assert _rows(mine / "final_result" / agg) == concatenation  # in character order
                assert Counter(_rows(mine / "final_result" / agg)) == Counter(_rows(published_agg))
            compared["games"] += 1
    assert compared == {"games": 4, "characters": 16}
    # format details: LF, 9 fields, lowercase letters, no BOM, CJK literal
    raw = (out / "chinese" / "罪恶（4人封闭）" / "final_result" / "张村民.csv").read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf") and b"\r" not in raw and raw.endswith(b"\n")
    assert "赵慈善".encode() in raw
    for row in csv.reader(io.StringIO(raw.decode())):
        assert len(row) == 9 and row[0] == row[0].lower()


def test_read_write_read_is_identity(g3_written) -> None:
    games, out, _ = g3_written
    again = {(g.language, g.slug): g for g in read_wellplay(out).games}
    assert len(again) == len(games)
    for game in games:
        other = again[(game.language, game.slug)]
        assert (other.title, other.title_note, other.counterpart) == (game.title, game.title_note, game.counterpart)
        assert other.characters == game.characters
        assert (other.victims, other.kills, other.relationships) == (game.victims, game.kills, game.relationships)
        assert [(q.kind, q.sub_type, q.stem, q.options, q.answer, q.multi, q.perspective, q.extra)
                for q in other.questions] == [
                (q.kind, q.sub_type, q.stem, q.options, q.answer, q.multi, q.perspective, q.extra)
                for q in game.questions]
        assert other.extra["wellplay"]["script_info"] == game.extra["wellplay"]["script_info"]


def test_output_is_deterministic(g3_written, tmp_path: Path) -> None:
    games, out, files = g3_written
    again = write_wellplay(copy.deepcopy(games), tmp_path)
    assert [p.relative_to(tmp_path) for p in again] == [p.relative_to(out) for p in files]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(again, files, strict=True))


def test_edits_are_written_from_the_fields(g3_written, tmp_path: Path) -> None:
    games, _, _ = g3_written
    game = copy.deepcopy(next(g for g in games if g.slug == "罪恶（4人封闭）"))
    villager = game.character("张村民")
    villager.script = "张村民\n改写后的剧本。"
    villager.goals = ["新的目标。"]
    question = game.questions[0]
    for option in question.options:
        option.correct = option.text == "胡调研"
    write_wellplay([game], tmp_path)
    data = json.loads((tmp_path / "chinese" / game.slug / "json" / "张村民.json").read_text("utf-8"))
    assert data["script"] == ["张村民\n改写后的剧本。"] and data["acts_goal"] == ["新的目标。"]
    assert _rows(tmp_path / "chinese" / game.slug / "final_result" / "张村民.csv")[0][-1] == "c"
    # an unedited character next to it still gets its raw published strings
    chief = json.loads((tmp_path / "chinese" / game.slug / "json" / "王村长.json").read_text("utf-8"))
    assert "\\n" in chief["script"][0]


def _scratch_game() -> Game:
    """A game made in Casebook: no WellPlay extras at all."""
    game = Game(slug="夜车（2人）", title="夜车", title_note="（2人）", language="zh")
    game.characters = [
        Character("司机"), Character("乘客", is_murderer=True), Character("售票员", playable=False, is_victim=True)
    ]
    game.victims = ["售票员"]
    game.kills = [Kill("乘客", "售票员")]
    game.relationships = [Relationship("售票员", "乘客", ["murderer of x", "debtor of x"])]
    relation = Question(
        kind=QuestionKind.RELATIONS, stem="【售票员】和【乘客】的关系是什么？", perspective="司机", sub_type="two",
        options=[Option("", correct=True), Option("乘客 is son of 售票员"), Option("")],
    )
    relation.extra["option_labels"] = [
        {"subject": "乘客", "labels": ["murderer of x", "debtor of x"], "object": "售票员"},
        None,
        {"subject": "售票员", "labels": ["killed by x"], "object": "乘客"},
    ]
    game.questions = [
        Question(kind=QuestionKind.OBJECTIVE, stem="售票员被谁杀死的？", perspective="司机",
                 options=[Option("乘客", correct=True), Option("自杀")]),
        relation,
    ]
    return game


def test_scratch_game_defaults_and_rendered_relation_options(tmp_path: Path) -> None:
    game = _scratch_game()
    write_wellplay([game], tmp_path, g1_extras=True)
    root = tmp_path / "chinese" / "夜车（2人）"
    info = json.loads((root / "json" / "script_info.json").read_text("utf-8"))
    assert info == {"agent_num": 2, "script_name": "夜车", "character_name": ["司机", "乘客"], "acts_num": 1,
                    "stage": [""] * 7, "open_discuss_rounds": [2, 2, 2], "keep_asking": [2, 2, 2],
                    "privacy_discuss_rounds": [0, 0, 1]}
    passenger = json.loads((root / "json" / "乘客.json").read_text("utf-8"))
    assert list(passenger) == ["acts_num", "script", "acts_goal", "questions", "victims", "kill_by_me",
                               "final_goal", "acts_performance", "secrets", "is_murderer"]
    assert (passenger["victims"], passenger["kill_by_me"], passenger["is_murderer"]) == (["售票员"], [1], 1)
    assert passenger["script"] == [""] and passenger["acts_goal"] == [""]
    rows = _rows(root / "final_result" / "司机.csv")
    assert rows[1] == ("c", "a", "【售票员】和【乘客】的关系是什么？",
                       ("乘客 is murderer and debtor of 售票员", "乘客 is son of 售票员", "售票员 is killed by 乘客"), "a")
    assert (root / "final_result" / "乘客.csv").read_text("utf-8") == ",".join(HEADER) + "\n"
    assert json.loads((root / "all.json").read_text("utf-8")) == {"售票员": [["乘客", "murderer of x, debtor of x"]]}
    assert json.loads((root / "qa-character.json").read_text("utf-8")) == {"司机": ["售票员"], "乘客": []}
    back = read_wellplay(tmp_path).games[0]
    assert [c.name for c in back.playable] == ["司机", "乘客"] and back.kills == game.kills


def test_too_many_options_is_a_clear_error(tmp_path: Path) -> None:
    game = _scratch_game()
    game.questions[0].options = [Option(f"选项{i}") for i in range(6)]
    with pytest.raises(ValueError, match=r"6 options, but WellPlay has only 5 option columns"):
        write_wellplay([game], tmp_path)


def test_g1_extras_round_trip(wellplay_anchor: Path, tmp_path: Path) -> None:
    legacy = wellplay_anchor / "legacy-195be0c"
    games = read_wellplay(legacy).games
    write_wellplay(games, tmp_path, g1_extras=True)
    for game in (g for g in games if g.language == "zh"):
        source = legacy / "chinese" / f"{game.extra['wellplay']['g1_id']}-{game.slug}"
        written = tmp_path / "chinese" / game.slug
        published_graph = json.loads((source / "all.json").read_text("utf-8"))
        written_graph = json.loads((written / "all.json").read_text("utf-8"))
        assert written_graph == {k: [[t, ", ".join(x.strip() for x in labels.split(","))] for t, labels in v]
                                 for k, v in published_graph.items()}
        assert json.loads((written / "qa-character.json").read_text("utf-8")) == json.loads(
            (source / "qa-character.json").read_text("utf-8"))
        back = next(g for g in read_wellplay(tmp_path).games if g.slug == game.slug and g.language == "zh")
        assert back.relationships == game.relationships


def test_irregular_fixtures_export_cleanly(fixtures_dir: Path, tmp_path: Path) -> None:
    games = read_wellplay(fixtures_dir / "irregular" / "wellplay").games
    write_wellplay(games, tmp_path)
    again = read_wellplay(tmp_path)
    # what was repaired on import does not come back: only the published quirks kept on purpose remain
    kept = Counter(p.message.split(" (")[0] for p in again.problems if p.severity != "info")
    assert set(kept) <= {"truth 'bb' repeats a letter", "blank question text"}
    fog = tmp_path / "chinese" / "雾港疑案（3人封闭）" / "final_result"
    assert _rows(fog / "林·小雨.csv")[2] == ("b", "a", "孙老板是在哪里被杀死的？", ("码头", "仓库", "灯塔"), "b")
    g2 = json.loads((tmp_path / "chinese" / "旧宅（2人）" / "json" / "甲先生.json").read_text("utf-8"))
    assert len(g2) == 10 and g2["questions"] == []  # G2 reduced keys completed on export
    zhou = json.loads((tmp_path / "english" / "Harbor Fog (3 people closed)" / "json" / "Zhou Ming.json").read_text("utf-8"))
    assert zhou["questions"] == [] and len(zhou) == 10
