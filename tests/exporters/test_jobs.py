"""Export and import pages (background jobs): the same rules as the commands, problems listed,
the ZIP equal to what `manage.py export` writes, roles checked on the page and in the job."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotate import models as m
from annotate.builder import build_game
from casebook.models import Job
from tests.test_builder_loader import make_game

pytestmark = pytest.mark.django_db


@pytest.fixture
def immediate(settings, tmp_path):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.DATA_DIR = tmp_path / "data"
    return settings


def _member(django_user_model, game, name: str, role: str):
    user = django_user_model.objects.create_user(name, password="x")
    m.Membership.objects.create(user=user, game=game, role=role)
    return user


def _zip_tree(root: Path, arcroot: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, f"{arcroot}/{path.relative_to(root).as_posix()}")
    return buffer.getvalue()


def test_export_from_the_page_is_the_command_export_zipped(client, django_user_model, immediate, tmp_path):
    game = build_game(make_game()).game
    boss = _member(django_user_model, game, "boss", "manager")
    client.force_login(boss)
    page = client.post(reverse("exporters:export", args=[game.slug]), {"format": "jsonl"})
    job = Job.objects.get(kind="export")
    assert page.url == reverse("exporters:export_job", args=[game.slug, job.pk])
    status = client.get(page.url, HTTP_ACCEPT="application/json").json()
    assert status["state"] == "done" and status["done"] == status["total"] == 3 and status["download"]
    download = client.get(status["download"])
    disposition = download["Content-Disposition"]
    assert disposition.startswith("attachment;") and disposition.endswith("-jsonl.zip")  # a Chinese slug, RFC 5987-encoded
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    call_command("export", format="jsonl", out=tmp_path / "cmd", games=[game.slug], verbosity=0)
    assert sorted(archive.namelist()) == ["clues.jsonl", "questions.jsonl", "scripts.jsonl"]
    assert archive.read("questions.jsonl") == (tmp_path / "cmd" / "questions.jsonl").read_bytes()


def test_a_refused_export_lists_the_problems_and_writes_nothing(client, django_user_model, immediate):
    game = build_game(make_game()).game
    question = m.Question.objects.filter(game=game).first()
    question.options.update(is_correct=False)
    m.Question.objects.filter(pk=question.pk).update(answer="")
    client.force_login(_member(django_user_model, game, "boss", "manager"))
    page = client.post(reverse("exporters:export", args=[game.slug]), {"format": "wellplay"})
    status = client.get(page.url, HTTP_ACCEPT="application/json").json()
    assert status["state"] == "failed" and "Export refused" in status["message"] and status["download"] is None
    assert any("no correct answer" in p["message"] for p in status["result"]["problems"])
    forced = client.post(reverse("exporters:export", args=[game.slug]), {"format": "wellplay", "force": "on"})
    status = client.get(forced.url, HTTP_ACCEPT="application/json").json()
    assert status["state"] == "done" and any("no correct answer" in p["message"] for p in status["result"]["problems"])


def test_only_managers_export_and_download(client, django_user_model, immediate):
    game = build_game(make_game()).game
    boss = _member(django_user_model, game, "boss", "manager")
    reviewer = _member(django_user_model, game, "rita", "reviewer")
    client.force_login(reviewer)
    assert client.get(reverse("exporters:export", args=[game.slug])).status_code == 403
    assert client.post(reverse("exporters:export", args=[game.slug]), {"format": "jsonl"}).status_code == 403
    client.force_login(boss)
    client.post(reverse("exporters:export", args=[game.slug]), {"format": "jsonl"})
    job = Job.objects.get(kind="export")
    client.force_login(reviewer)
    assert client.get(reverse("exporters:export_download", args=[game.slug, job.pk])).status_code == 403
    # the job checks the role when it runs: a manager demoted after clicking exports nothing
    from exporters import jobs
    m.Membership.objects.filter(user=boss).update(role="annotator")
    again = Job.objects.create(kind="export", game=game, user=boss, params={"format": "jsonl", "force": False, "include_drafts": False})
    jobs.run_export_job(again.pk)
    again.refresh_from_db()
    assert again.state == "failed" and "manager" in again.message and jobs.export_zip(again) is None


def test_import_page_imports_a_zipped_wellplay_game_and_lists_its_problems(client, django_user_model, immediate,
                                                                           wellplay_anchor):
    folder = next((wellplay_anchor / "chinese").iterdir())
    some_game = build_game(make_game()).game
    boss = _member(django_user_model, some_game, "boss", "manager")
    annotator = _member(django_user_model, some_game, "ann", "annotator")
    upload = SimpleUploadedFile("game.zip", _zip_tree(folder, folder.name), content_type="application/zip")
    client.force_login(annotator)
    assert client.post(reverse("exporters:import"), {"format": "wellplay", "archive": upload}).status_code == 403
    client.force_login(boss)
    upload.seek(0)
    page = client.post(reverse("exporters:import"), {"format": "wellplay", "archive": upload})
    job = Job.objects.get(kind="import")
    status = client.get(page.url, HTTP_ACCEPT="application/json").json()
    assert status["state"] == "done", status
    [imported] = status["result"]["games"]
    game = m.Game.objects.get(slug=imported["slug"])
    assert imported["status"] == "created" and imported["url"] and imported["questions"] == game.questions.count() > 0
    assert m.Membership.objects.get(user=boss, game=game).role == "manager"
    assert not (Path(immediate.DATA_DIR) / "exports" / str(job.pk)).exists()  # the upload is removed

    # the same upload again: the stored game is the same, and is left alone, as the command does
    upload.seek(0)
    again = client.post(reverse("exporters:import"), {"format": "wellplay", "archive": upload})
    status = client.get(again.url, HTTP_ACCEPT="application/json").json()
    assert status["result"]["games"][0]["status"] == "unchanged" and m.Game.objects.filter(source_id=game.source_id).count() == 1


def test_import_refuses_what_is_not_a_safe_zip(client, django_user_model, immediate):
    game = build_game(make_game()).game
    client.force_login(_member(django_user_model, game, "boss", "manager"))
    not_zip = SimpleUploadedFile("game.zip", b"plain text", content_type="application/zip")
    page = client.post(reverse("exporters:import"), {"format": "wellplay", "archive": not_zip}, follow=True)
    assert "not a ZIP archive" in page.content.decode() and not Job.objects.filter(kind="import").exists()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../escape.json", "{}")
    evil = SimpleUploadedFile("evil.zip", buffer.getvalue(), content_type="application/zip")
    page = client.post(reverse("exporters:import"), {"format": "wellplay", "archive": evil}, follow=True)
    assert "unsafe path" in page.content.decode()
    assert not (Path(immediate.DATA_DIR) / "exports" / "escape.json").exists()
    assert Job.objects.get(kind="import").state == "failed"


def test_only_the_newest_exports_keep_their_zip(client, django_user_model, immediate):
    from exporters import jobs

    game = build_game(make_game()).game
    client.force_login(_member(django_user_model, game, "boss", "manager"))
    for _ in range(jobs.KEEP_EXPORTS + 2):
        client.post(reverse("exporters:export", args=[game.slug]), {"format": "csv"})
    kept = [jobs.export_zip(job) is not None for job in Job.objects.filter(kind="export").order_by("-created_at", "-pk")]
    assert kept == [True] * jobs.KEEP_EXPORTS + [False, False]
