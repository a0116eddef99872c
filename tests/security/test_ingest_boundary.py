"""Attack 1: ingest "replace" must need the manager role on the game it would overwrite, never
match a game of another origin, never name a game the uploader cannot see, and de-duplicate files
only against games the uploader can see."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import Game, Membership
from casebook.models import Job

pytestmark = pytest.mark.django_db

SCRIPT = "第一幕\n那天晚上十点，林管家走进了书房。\n"


def upload(client, title: str, *, replace: bool, content: str = SCRIPT, name: str = "x.txt") -> dict:
    response = client.post(reverse("ingest:upload"), {
        "files": [SimpleUploadedFile(name, content.encode(), "text/plain")],
        "title": title, "language": "zh", "characters": "", "replace": "on" if replace else "",
    })
    assert response.status_code == 302, response.content[:500]
    return client.get(reverse("ingest:job_json", args=[Job.objects.latest("pk").pk])).json()


def snapshot(game: Game) -> tuple:
    game.refresh_from_db()
    return (game.questions.count(), game.characters.count(), game.origin, game.content_hash, game.updated_at)


def test_outsider_cannot_replace_an_imported_game_by_its_title(client, victim, people):
    before = snapshot(victim)
    client.force_login(people["outsider"])
    status = upload(client, victim.slug, replace=True)
    assert snapshot(victim) == before  # another origin: never matched, the victim is untouched
    assert status["state"] == "done" and status["game"] != victim.slug


def test_outsider_cannot_replace_an_ingested_game_and_is_not_told_its_slug(client, victim, people):
    Game.objects.filter(pk=victim.pk).update(origin="ingested", source_id="")
    before = snapshot(victim)
    client.force_login(people["outsider"])
    for replace in (True, False):
        status = upload(client, victim.slug, replace=replace)
        assert status["state"] == "failed"
        assert "choose another title" in status["message"] and victim.title not in status["message"]
    assert snapshot(victim) == before


@pytest.mark.parametrize("role", ["annotator", "reviewer"])
def test_members_below_manager_cannot_replace(client, victim, people, role):
    Game.objects.filter(pk=victim.pk).update(origin="ingested", source_id="")
    before = snapshot(victim)
    client.force_login(people[role])
    status = upload(client, victim.slug, replace=True)
    assert status["state"] == "failed" and "needs the manager role" in status["message"]
    assert snapshot(victim) == before


def test_manager_may_replace_their_own_ingested_game(client, victim, people):
    Game.objects.filter(pk=victim.pk).update(origin="ingested", source_id="")
    client.force_login(people["manager"])
    status = upload(client, victim.slug, replace=True)
    assert status["state"] == "done", status["message"]
    assert status["result"]["status"] == "replaced" and status["game"] == victim.slug


def test_file_dedup_does_not_cross_into_games_the_uploader_cannot_see(client, victim, people):
    client.force_login(people["manager"])
    first = upload(client, "管家的秘密", replace=False)
    assert first["state"] == "done", first["message"]
    client.force_login(people["outsider"])
    second = upload(client, "另一个游戏", replace=False)  # same bytes, another team
    assert second["state"] == "done", second["message"]
    assert "管家的秘密" not in second["message"]
    assert Membership.objects.filter(user=people["outsider"], game__slug=second["game"], role="manager").exists()
