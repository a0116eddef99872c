"""Importing played games (ONUW, CSV, JSONL, real WhodunitBench agent logs), refusing bad input
whole, and exporting per-turn belief matrices (Eq. 15) in JSONL and the ONUW layout."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Game
from casebook.belief import belief_matrix, suspects_from_guesses, suspicion_toward
from playlogs.export import onuw_log, turn_rows, write_sessions
from playlogs.models import Session, TurnAnnotation
from playlogs.readers import read_csv, read_jsonl, read_log, read_onuw

from .conftest import LOGS, load

pytestmark = pytest.mark.django_db


def test_belief_matrix_follows_eq_15():
    players = ["a", "b", "c", "d"]
    m = belief_matrix(players, {"a": ["b", "c"], "b": [], "c": ["a"], "d": ["zz"]})
    assert m[0] == [0, 0.5, 0.5, 0]
    assert m[1] == [0.25] * 4  # suspects nobody: uniform
    assert m[2] == [1, 0, 0, 0]
    assert m[3] == [0.25] * 4  # an unknown name is ignored
    assert all(abs(sum(r) - 1) < 1e-9 for r in m)
    assert suspicion_toward(m) == [1.5, 0.75, 1.0, 0.25]  # column sums without the diagonal
    assert suspects_from_guesses({"a": {"b": "Werewolf/Villager", "c": "Seer"}}, "werewolf") == {"a": ["b"]}


def test_onuw_log_imports_players_turns_and_its_labels(onuw):
    assert onuw.session_type == "onuw" and onuw.game.extra["played_only"] is True
    assert [(p.name, p.true_role) for p in onuw.players.all()] == [
        ("player1", "Werewolf"), ("player2", "Seer"), ("player3", "Villager")]
    turns = list(onuw.turns.all())
    assert [t.speaker.name for t in turns] == ["player2", "player1", "player3"]
    assert turns[2].visible_to == ["player1", "player2"] and turns[0].visible_to == []
    assert turns[0].timestamp == 1700000000000000000 and turns[0].extra["belief"] == "player1 is lying"
    first = turns[0].annotations.get()
    assert first.source == TurnAnnotation.Source.IMPORTED
    assert first.tone == "anger" and first.face == "neutral"  # "Angry" folded to the data's label
    assert first.triplets[1] == ["player2", "point_as_werewolf", "player1"]
    assert first.suspicions == {"player1": ["player2"], "player2": ["player1"], "player3": ["player1"]}
    assert not turns[2].annotations.exists()
    # the session's page lives under its own game
    assert onuw.game.characters.count() == 3


def test_bad_onuw_log_is_refused_whole_with_every_problem(tmp_path):
    bad = {"messages": [
        {"agent_name": "player1", "content": "hi", "sp_actions": [["player1", "dance_with", "player2"]]},
        {"content": "no speaker"},
        {"agent_name": "player2", "content": "x", "guesses": "player1 is bad"},
        {"agent_name": "player2", "content": "y", "sp_actions": [["player2", "support", "player9"]]},
    ]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    games = Game.objects.count()
    with pytest.raises(CommandError) as err:
        call_command("import_session", str(path), "--format", "onuw")
    text = str(err.value)
    assert "nothing was imported" in text
    assert "message 1: action 'dance_with' is not in the onuw action set" in text
    assert "message 2: 'agent_name' (the speaker) is missing" in text
    assert "message 3: 'guesses' must be an object" in text
    assert Session.objects.count() == 0 and Game.objects.count() == games
    path.write_text("{not json", encoding="utf-8")
    assert read_log(path, "onuw").errors == ["line 1: not valid JSON (Expecting property name enclosed in double quotes)"]
    # cross-field check at import: a triplet naming a non-player
    with pytest.raises(CommandError, match="names someone who is not a player"):
        path.write_text(json.dumps({"messages": [bad["messages"][3]]}), encoding="utf-8")
        call_command("import_session", str(path), "--format", "onuw")
    assert Session.objects.count() == 0


def test_csv_and_jsonl_transcripts_give_the_same_session():
    csv_s, jsonl_s = load("transcript.csv", "csv"), load("transcript.jsonl", "jsonl")
    for s in (csv_s, jsonl_s):
        assert s.session_type == "jubensha"
        assert [(p.name, p.true_role) for p in s.players.all()] == [
            ("林管家", "murderer"), ("小红", "detective"), ("Alice", "detective")]
        assert [t.text for t in s.turns.all()][2] == "I support 小红, the key story is true."
    assert [t.timestamp for t in jsonl_s.turns.all()] == [1, 2, 3]


def test_bad_transcripts_name_each_line():
    bad_csv = read_csv("speaker,text\n小红,我怀疑他\n,没有说话人\nAlice,\n", "t")
    assert bad_csv.errors == ["line 3: speaker missing or empty", "line 4: text missing or empty"]
    assert read_csv("who,said\na,b\n", "t").errors[0].startswith("line 1: the header must name the columns")
    bad_jsonl = read_jsonl('{"speaker": "a", "text": "x"}\n{oops\n{"speaker": "b", "text": "y", "timestamp": "noon"}\n', "t")
    assert bad_jsonl.errors[0].startswith("line 2: not valid JSON")
    assert bad_jsonl.errors[1] == "line 3: timestamp 'noon' is not a whole number"


def test_whodunitbench_agent_logs_import_from_the_real_anchors(whodunitbench_anchor):
    di7mi = import_from(whodunitbench_anchor / "DI7MI_2", 1)
    names = [p.name for p in di7mi.players.all()]
    assert "萨拉" in names and "达文西" not in names  # the agent alias is read as the role
    env = json.loads((whodunitbench_anchor / "DI7MI_2" / "env_p_all.json").read_text(encoding="utf-8"))
    murderer = env["murder"]
    assert di7mi.players.get(name=murderer).true_role == "murderer"
    phases = [t.phase for t in di7mi.turns.all()]
    dis = json.loads((whodunitbench_anchor / "DI7MI_2" / "Agent_dis.json").read_text(encoding="utf-8"))
    votes = json.loads((whodunitbench_anchor / "DI7MI_2" / "Agent_vote.json").read_text(encoding="utf-8"))
    assert phases.count("discussion") == len(dis) and phases.count("vote") == len(votes)
    vote_turns = di7mi.turns.filter(phase="vote")
    accused = [a.triplets[0] for t in vote_turns for a in t.annotations.all()]
    assert accused and all(action == "accuse_as_murderer" for _, action, _ in accused)
    assert di7mi.extra["final_accusations"]
    xiaohua = import_from(whodunitbench_anchor / "XIAOHUA_example", 2)
    assert xiaohua.title == "XIAOHUA_example run 2" and xiaohua.turns.filter(phase="discussion").count() > 0
    rows = list(turn_rows(xiaohua))
    last = rows[-1]
    voters = [t.speaker.name for t in xiaohua.turns.filter(phase="vote") if t.annotations.exists()]
    for voter in voters:  # each vote is that player's whole belief row
        assert max(last["belief_matrix"][last["players"].index(voter)]) == 1.0


def import_from(folder, run):
    call_command("import_session", str(folder), "--format", "whodunitbench", "--run", str(run))
    return Session.objects.latest("pk")


def test_whodunitbench_session_joins_the_imported_game(whodunitbench_anchor):
    call_command("import_dataset", str(whodunitbench_anchor / "XIAOHUA_example"), "--format", "whodunitbench")
    game = Game.objects.get(source_id="XIAOHUA_example")
    session = import_from(whodunitbench_anchor / "XIAOHUA_example", 1)
    assert session.game == game
    assert all(p.character and p.character.game == game for p in session.players.all())


def test_export_has_belief_matrices_per_turn_and_the_onuw_layout(onuw, tmp_path):
    rows = list(turn_rows(onuw))
    assert [r["turn"] for r in rows] == [0, 1, 2]
    assert rows[0]["belief_matrix"] == [[0, 1, 0], [1, 0, 0], [1, 0, 0]]
    assert rows[1]["suspicions"]["player3"] == ["player1"]
    assert rows[2]["belief_matrix"] == rows[1]["belief_matrix"]  # no guesses at turn 3: carried forward
    assert rows[0]["suspicion_toward"] == {"player1": 2.0, "player2": 1.0, "player3": 0.0}
    log = onuw_log(onuw)
    assert log["roles"]["player1"] == "Werewolf"
    assert [m["turn"] for m in log["messages"]] == [1, 2, 3]  # the log's own turn numbers survive
    back = read_onuw(log, "again")  # the ONUW layout reads back with the same suspicions
    assert not back.errors
    assert suspects_from_guesses(log["messages"][0]["guesses"], "werewolf") == rows[0]["suspicions"]
    assert back.turns[0].annotation.triplets == rows[0]["triplets"]
    files = write_sessions([onuw], tmp_path)
    lines = files[0].read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["belief_matrix"] == rows[0]["belief_matrix"]
    assert json.loads(files[1].read_text(encoding="utf-8"))["messages"][0]["agent_name"] == "player2"


def test_a_real_discussion_goes_from_import_to_a_scored_model(whodunitbench_anchor, tmp_path):
    """Done-when path on real data: import DI7MI_2, export with belief matrices, score a baseline."""
    session = import_from(whodunitbench_anchor / "DI7MI_2", 1)
    write_sessions([session], tmp_path / "export")
    call_command("evaluate", str(tmp_path / "export"), "--format", "sessions", "--model", "baseline:lexical",
                 "--out", str(tmp_path / "report"), "--no-progress", "--no-charts", stdout=StringIO())
    summary = json.loads((tmp_path / "report" / "summary.json").read_text(encoding="utf-8"))
    assert summary["questions"] == session.turns.count()
    assert summary["belief"]["unparseable"] == 0 and 0 <= summary["belief"]["mae"] <= 1


def test_commands_refuse_bad_requests_clearly(onuw, tmp_path, django_user_model):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("import_session", str(tmp_path / "missing.json"), "--format", "onuw")
    with pytest.raises(CommandError, match="No game with slug 'nope'"):
        call_command("import_session", str(LOGS / "transcript.csv"), "--format", "csv", "--game", "nope")
    with pytest.raises(CommandError, match="No game with slug nope"):
        call_command("export_sessions", "--out", str(tmp_path), "--game", "nope")
    django_user_model.objects.create_user("anna")
    with pytest.raises(CommandError, match="not a member"):
        call_command("export_sessions", "--out", str(tmp_path / "x"), "--as", "anna")
    assert not (tmp_path / "x").exists()  # refused before anything was written
    out = StringIO()
    call_command("export_sessions", "--out", str(tmp_path / "ok"), "--game", onuw.game.slug, stdout=out)
    assert "Exported 1 sessions (2 files)" in out.getvalue()
    assert (tmp_path / "ok" / onuw.game.slug / f"session-{onuw.pk}.onuw.json").is_file()
