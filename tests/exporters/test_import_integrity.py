"""Imports never report success on broken input (issue 13, item 10), on a copy of the real game 罪恶:
a GBK-encoded question file is read (and the encoding reported), a file that cannot be read makes
the command fail and store nothing unless --allow-errors, and messages carry no exception texts."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Game, Question
from exporters.service import import_dataset

SIN = "chinese/罪恶（4人封闭）"


@pytest.fixture
def sin_copy(wellplay_anchor: Path, tmp_path: Path) -> Path:
    target = tmp_path / "wellplay" / SIN
    shutil.copytree(wellplay_anchor / SIN, target)
    return target


def _csvs(game_dir: Path) -> list[Path]:
    return sorted(p for p in (game_dir / "final_result").glob("*.csv") if not p.name.startswith("relation_"))


@pytest.mark.django_db
def test_gbk_and_bom_files_are_read_and_the_encoding_reported(sin_copy: Path, wellplay_anchor: Path, capsys):
    baseline = import_dataset("wellplay", wellplay_anchor / SIN).games[0].questions
    Game.objects.all().delete()
    gbk, bom = [p for p in _csvs(sin_copy) if p.name != "GM.csv"][:2]
    gbk.write_bytes(gbk.read_text(encoding="utf-8-sig").encode("gb18030"))
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes().removeprefix(b"\xef\xbb\xbf"))
    call_command("import_dataset", str(sin_copy), format="wellplay", quiet_report=False)
    out = capsys.readouterr().out
    assert Question.objects.count() == baseline
    assert f"{gbk.name}" in out and "encoded as GB18030/GBK" in out
    assert "UTF-8 BOM" in out


@pytest.mark.django_db
def test_an_unreadable_file_fails_the_import_unless_errors_are_allowed(sin_copy: Path, capsys):
    broken = _csvs(sin_copy)[0]
    broken.write_bytes(b"\xff\xff\xff value,type\n")
    with pytest.raises(CommandError, match="allow-errors"):
        call_command("import_dataset", str(sin_copy), format="wellplay", quiet_report=True)
    out = capsys.readouterr().out
    assert "neither UTF-8 nor GB18030/GBK" in out  # errors are printed even with --quiet-report
    assert not Game.objects.exists()
    call_command("import_dataset", str(sin_copy), format="wellplay", quiet_report=True, allow_errors=True)
    assert "stored with what could be read" in capsys.readouterr().out
    assert Game.objects.count() == 1 and Question.objects.exists()


@pytest.mark.django_db
def test_messages_carry_no_exception_texts(sin_copy: Path, capsys):
    """A game whose files have shapes the reader trips on is reported in words."""
    (sin_copy / "json" / "script_info.json").write_text('{"character_name": [["张村民"]], "script_name": 3}',
                                                        encoding="utf-8")
    for csv in _csvs(sin_copy):
        csv.write_text("", encoding="utf-8")
    with pytest.raises(CommandError):
        call_command("import_dataset", str(sin_copy), format="wellplay")
    out = capsys.readouterr().out
    for raw in ("Error:", "Traceback", "unhashable", "index out of range", "Errno"):
        assert raw not in out, out
