"""Attack 8: packages that expand far beyond their size, and oversized imports, are refused with a
clear message before they are decoded; nothing is saved and no temp folder is left behind."""
from __future__ import annotations

import tempfile
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate.models import Game, SourceDocument
from casebook.models import Job
from ingest import pipeline
from ingest.pipeline import IngestOptions, run_ingest
from ingest.read import MAX_FILE_BYTES, MAX_TEXT_BYTES, IngestError

pytestmark = pytest.mark.django_db

LINE = "林管家在十点走进书房，桌上的茶已经凉了。\n"


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Route tempfile into a folder of our own so leftovers are visible."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def text_bomb(path, members: int = 8, each: int = 5 * 2**20) -> None:
    """A small ZIP of TXT members, each well under the per-file limit, together over the text limit."""
    chunk = (LINE * (each // len(LINE.encode()) + 1)).encode()[:each]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(members):
            archive.writestr(f"script-{i}.txt", f"第{i}幕\n".encode() + chunk)


def test_zip_text_bomb_is_refused_before_decoding(tmp_path, private_tmp):
    bomb = tmp_path / "bomb.zip"
    text_bomb(bomb)
    assert bomb.stat().st_size < 2 * 2**20 and MAX_FILE_BYTES > 5 * 2**20 and MAX_TEXT_BYTES < 8 * 5 * 2**20
    with pytest.raises(IngestError, match="text files add up to more than 30 MB"):
        run_ingest([bomb], IngestOptions("炸弹", "zh"))
    assert not Game.objects.exists() and not SourceDocument.objects.exists()
    assert list(private_tmp.iterdir()) == []


def test_extracted_text_over_the_limit_is_refused(tmp_path, private_tmp, monkeypatch):
    monkeypatch.setattr(pipeline, "MAX_TEXT_CHARS", 1000)  # the real limit is 20 M characters
    (tmp_path / "long.txt").write_text(LINE * 100, encoding="utf-8")
    with pytest.raises(IngestError, match="more than the limit of 1,000"):
        run_ingest([tmp_path / "long.txt"], IngestOptions("长文", "zh"))
    assert not Game.objects.exists() and list(private_tmp.iterdir()) == []


def test_web_upload_of_a_bomb_fails_readably_and_removes_its_upload(client, people, tmp_path, settings):
    bomb = tmp_path / "bomb.zip"
    text_bomb(bomb)
    client.force_login(people["manager"])
    client.post(reverse("ingest:upload"), {
        "files": [SimpleUploadedFile("bomb.zip", bomb.read_bytes(), "application/zip")],
        "title": "炸弹", "language": "zh", "characters": "",
    })
    status = client.get(reverse("ingest:job_json", args=[Job.objects.latest("pk").pk])).json()
    assert status["state"] == "failed" and "text files add up to more than" in status["message"]
    assert list((settings.DATA_DIR / "ingest-uploads").iterdir()) == []


def test_import_over_the_size_cap_is_refused(tmp_path, settings, wellplay_anchor):
    settings.CASEBOOK_MAX_IMPORT_BYTES = 64 * 1024
    big = tmp_path / "wellplay" / "chinese"
    big.mkdir(parents=True)
    (big / "scripts.json").write_text("[" + ",".join(['"' + "线" * 1000 + '"'] * 100) + "]", encoding="utf-8")
    with pytest.raises(CommandError, match="import limit"):
        call_command("import_dataset", str(tmp_path / "wellplay"), "--format", "wellplay")
    assert not Game.objects.exists()
    settings.CASEBOOK_MAX_IMPORT_BYTES = 200 * 2**20
    call_command("import_dataset", str(wellplay_anchor), "--format", "wellplay", "--quiet-report")
    assert Game.objects.exists()
