"""Moving a game between Casebook servers from the browser, in real headless Chromium: a manager
exports it in the Casebook format, downloads the ZIP, and imports that ZIP on the import page into
a database that no longer has the game; the game comes back exactly (its document re-exports
byte for byte)."""
from __future__ import annotations

import zipfile

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotate.models import EvidenceSpan, Game, Membership

from .conftest import make_game
from .test_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_manager_moves_a_game_with_the_casebook_format(page, live_server, django_user_model, settings, tmp_path):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.DATA_DIR = tmp_path / "data"
    game = make_game("moved")
    EvidenceSpan.objects.create(game=game, document="manual", start=0, end=2, quote=game.truth_text[:2],
                                label="motive", state="draft")
    other = make_game("stays")
    boss = django_user_model.objects.create_user("boss", password="correct horse battery")
    for row in (game, other):
        Membership.objects.create(user=boss, game=row, role="manager")
    login(page, live_server, boss)
    page.goto(f"{live_server.url}/g/{game.slug}/export/")
    page.select_option("#export-format", "casebook")
    page.click("#export-start")
    expect(page.locator("#job-download")).to_be_visible()
    expect(page.locator("#job-state")).to_have_text("done")
    with page.expect_download() as info:
        page.click("#download-link")
    archive = tmp_path / "moved.zip"
    info.value.save_as(archive)
    folder = game.source_id or game.slug
    with zipfile.ZipFile(archive) as zipped:
        document = zipped.read(f"{folder}/game.json")
        assert f"{folder}/manifest.json" in zipped.namelist()
    assert b'"label": "motive"' in document and b'"state": "draft"' in document

    Game.objects.filter(pk=game.pk).delete()
    page.goto(f"{live_server.url}/")
    page.click("header >> text=Import")
    page.select_option("#import-format", "casebook")
    page.set_input_files("#import-archive", str(archive))
    page.click("#import-form button[type=submit]")
    expect(page.locator("#job-games")).to_be_visible()
    expect(page.locator("#job-state")).to_have_text("done")
    expect(page.locator("#games-list")).to_contain_text("created")
    back = Game.objects.get(source_id=folder)
    assert Membership.objects.get(user=boss, game=back).role == "manager"
    call_command("export", "--format", "casebook", "--out", str(tmp_path / "again"), "--game", back.slug, verbosity=0)
    assert (tmp_path / "again" / folder / "game.json").read_bytes() == document
