"""Generic JSONL/CSV questions carry their scripts and clues by reference and can be answered from
the files alone; the published layouts export a game with scripts but no questions only when asked
(``--allow-empty``), and report the skip otherwise — on the console, in the exit status, in the job."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate import models as m
from annotate.builder import build_game
from casebook import interchange as ix
from casebook.models import Job
from exporters import jobs
from exporters.generic.reader import read_csv, read_jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture
def media(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    settings.MEDIA_ROOT = tmp_path / "data" / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    return tmp_path


def test_questions_are_answerable_from_the_files_alone(media):
    call_command("load_demo", verbosity=0)
    for fmt, read in (("jsonl", read_jsonl), ("csv", read_csv)):
        out = media / fmt
        call_command("export", "--format", fmt, "--out", str(out), verbosity=0)
        questions = read(out / f"questions.{fmt}")
        scripts = {r["script_id"]: r for r in read(out / f"scripts.{fmt}")}
        clues = {r["clue_id"]: r for r in read(out / f"clues.{fmt}")}
        assert len(questions) == m.Question.objects.filter(status="approved").count()
        assert len(scripts) == m.Character.objects.exclude(script="").count()
        assert len(clues) == m.Clue.objects.count()
        cited = 0
        for q in questions:
            assert q["context_script_ids"] and set(q["context_script_ids"]) <= set(scripts)
            assert set(q["context_clue_ids"]) <= set(clues)
            assert all(scripts[s]["game"] == q["game"] for s in q["context_script_ids"])
            # Each evidence quote is at its offsets in the script or clue the question names.
            for span in q["evidence"]:
                if span["document"] == "script":
                    text = scripts[f"{q['game']}/script/{span['owner']}"]["text"]
                    assert f"{q['game']}/script/{span['owner']}" in q["evidence_script_ids"]
                elif span["document"] == "clue":
                    clue = clues[f"{q['game']}/clue/{span['owner']}"]
                    text = clue["text"] or clue["ocr_text"]
                else:
                    continue
                assert text[span["start"]:span["end"]] == span["quote"]
                cited += 1
        assert cited >= 10, fmt


def scripted_game() -> m.Game:
    """A freshly ingested game: role scripts and a murderer, no questions yet."""
    return build_game(ix.Game(
        slug="新剧本", title="新剧本", language="zh", origin=ix.Origin.INGESTED,
        characters=[ix.Character(name="甲", script="我是甲。", is_murderer=True), ix.Character(name="乙", script="我是乙。")],
    )).game


def test_a_game_without_questions_is_skipped_loudly_unless_allowed(media):
    call_command("load_demo", verbosity=0)
    game = scripted_game()
    out = io.StringIO()
    call_command("export", "--format", "wellplay", "--out", str(media / "all"), stdout=out, verbosity=0)
    assert f"skipped 1 game(s) with no questions of this format: {game.slug}" in out.getvalue()
    with pytest.raises(CommandError, match=f"nothing to export: {game.slug} has no questions"):
        call_command("export", "--format", "whodunitbench", "--out", str(media / "one"), "--game", game.slug,
                     verbosity=0)
    assert not (media / "one").exists()
    call_command("export", "--format", "wellplay", "--out", str(media / "wp"), "--game", game.slug, "--allow-empty",
                 verbosity=0)
    written = {p.name for p in (media / "wp").rglob("*.json")}
    assert {"甲.json", "乙.json"} <= written
    call_command("export", "--format", "whodunitbench", "--out", str(media / "wb"), "--game", game.slug,
                 "--allow-empty", verbosity=0)
    assert list((media / "wb").rglob("env_p_all.json"))
    out = io.StringIO()
    call_command("export", "--format", "wellplay", "--out", str(media / "all2"), "--allow-empty", stdout=out,
                 verbosity=0)
    assert "skipped" not in out.getvalue()


def test_the_export_job_reports_the_skip_and_honours_allow_empty(media, client, django_user_model):
    game = scripted_game()
    boss = django_user_model.objects.create_user("boss", password="x")
    m.Membership.objects.create(user=boss, game=game, role="manager")
    client.force_login(boss)
    client.post(reverse("exporters:export", args=[game.slug]), {"format": "wellplay"})
    job = Job.objects.get(kind="export")
    assert job.state == "failed" and job.result["skipped"] == [game.slug]
    assert "no questions of this format" in job.message
    client.post(reverse("exporters:export", args=[game.slug]), {"format": "wellplay", "allow_empty": "on"})
    job = Job.objects.filter(kind="export").order_by("-pk").first()
    assert job.state == "done" and job.result["skipped"] == [] and job.result["files"] >= 2


def test_casebook_export_and_import_pages_round_trip(media, client, django_user_model):
    call_command("load_demo", verbosity=0)
    boss = django_user_model.objects.get(username="demo")
    client.force_login(boss)
    zh = m.Game.objects.get(source_id="demo-pine-wind-teahouse-zh")
    client.post(reverse("exporters:export", args=[zh.slug]), {"format": "casebook"})
    job = Job.objects.get(kind="export")
    assert job.state == "done", job.message
    archive = zipfile.ZipFile(jobs.job_dir(job) / job.result["zip"])
    names = archive.namelist()
    assert "demo-pine-wind-teahouse-zh/manifest.json" in names and "demo-pine-wind-teahouse-zh/game.json" in names
    before = archive.read("demo-pine-wind-teahouse-zh/game.json")
    m.Game.objects.filter(pk=zh.pk).delete()
    upload = SimpleUploadedFile("zh.zip", (jobs.job_dir(job) / job.result["zip"]).read_bytes())
    client.post(reverse("exporters:import"), {"format": "casebook", "archive": upload})
    imported = Job.objects.get(kind="import")
    assert imported.state == "done", imported.result
    assert [g["status"] for g in imported.result["games"]] == ["created"]
    call_command("export", "--format", "casebook", "--out", str(media / "again"), "--game",
                 "demo-pine-wind-teahouse-zh", verbosity=0)
    assert (Path(media / "again") / "demo-pine-wind-teahouse-zh" / "game.json").read_bytes() == before
    # A damaged upload: the job fails with the reason and nothing is stored.
    games = m.Game.objects.count()
    damaged = io.BytesIO()
    with zipfile.ZipFile(damaged, "w") as out:
        for name in names:
            data = archive.read(name)
            out.writestr(name, data.replace("松风茶社".encode(), "松风荼社".encode()) if name.endswith("game.json") else data)
    client.post(reverse("exporters:import"), {"format": "casebook",
                                              "archive": SimpleUploadedFile("bad.zip", damaged.getvalue())})
    refused = Job.objects.filter(kind="import").order_by("-pk").first()
    assert refused.state == "failed" and "checksum mismatch" in refused.message
    assert m.Game.objects.count() == games
