"""Exports are one consistent snapshot and replace their folder only when complete (issue 13, item 9)."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections

from annotate import models as m
from annotate.builder import build_game
from exporters.service import EXPORT_MARKER, export_games
from tests.test_builder_loader import make_game


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


@pytest.mark.django_db
def test_re_export_holds_exactly_the_new_export(tmp_path: Path):
    """A renamed character's old file and a deleted game's folder do not survive a re-export."""
    build_game(make_game(slug="茶馆疑案"))
    build_game(make_game(slug="第二案"))
    out = tmp_path / "wellplay"
    first = export_games("wellplay", out)
    assert any("苏·晚晴" in str(p) for p in first.files)
    m.Character.objects.filter(name="苏·晚晴").update(name="苏晚晴")
    m.Game.objects.filter(slug="第二案").delete()
    second = export_games("wellplay", out)
    assert _files(out) == {str(p.relative_to(out)) for p in second.files} | {EXPORT_MARKER}
    assert not any("苏·晚晴" in name or "第二案" in name for name in _files(out))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging or old folder left behind


@pytest.mark.django_db
def test_a_folder_of_other_files_is_refused_and_left_alone(tmp_path: Path):
    build_game(make_game())
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes", encoding="utf-8")
    with pytest.raises(CommandError, match="not a Casebook export"):
        call_command("export", format="jsonl", out=out, verbosity=0)
    assert _files(out) == {"notes.txt"}


@pytest.mark.django_db
@pytest.mark.parametrize("where,words", [("file", "is a file, not a folder"), ("under-file", "part of the path is a file"),
                                         ("sys", "permission denied")])
def test_unwritable_targets_are_clear_errors(tmp_path: Path, where: str, words: str):
    build_game(make_game())
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    out = {"file": tmp_path / "a-file", "under-file": tmp_path / "a-file" / "out",
           "sys": Path("/sys/casebook-export-test")}[where]
    with pytest.raises(CommandError) as caught:
        call_command("export", format="jsonl", out=out, verbosity=0)
    assert words in str(caught.value) and "Errno" not in str(caught.value)


@pytest.mark.django_db(transaction=True)
def test_export_is_one_snapshot_while_another_session_edits(tmp_path: Path):
    """An edit committed by another connection between loading game 1 and game 2 stays out of the
    export (it would have shown in game 2 when each game was read on its own)."""
    build_game(make_game(slug="甲案"))
    build_game(make_game(slug="乙案"))
    outcome: dict = {}

    def edit(game_pk: int) -> None:
        try:
            target = m.Question.objects.filter(game_id=game_pk).order_by("position").first()
            outcome["question"] = target.pk
            m.Question.objects.filter(pk=target.pk).update(stem="改过的题干")
            outcome["committed"] = True
        except Exception as exc:  # SQLite's in-memory test database locks instead of versioning
            outcome["error"] = exc
        finally:
            connections.close_all()

    def edit_between_games(rows):
        for i, row in enumerate(rows):
            if i == 1:
                worker = threading.Thread(target=edit, args=(row.pk,))
                worker.start()
                worker.join(30)
            yield row

    summary = export_games("jsonl", tmp_path / "out", include_drafts=True, progress=edit_between_games)
    text = (tmp_path / "out" / "questions.jsonl").read_text(encoding="utf-8")
    assert sorted(summary.games) == ["乙案", "甲案"] and "question" in outcome
    assert "改过的题干" not in text and text.count("谁杀了周伯？0") == 2
    if connection.vendor == "postgresql":
        assert outcome.get("committed"), outcome
        assert m.Question.objects.get(pk=outcome["question"]).stem == "改过的题干"
