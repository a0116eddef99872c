"""The synthesis pages: start a run as a job, follow it, read the draft's record, re-run a stage."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotate.models import Game, Membership
from casebook.models import Job
from casebook.openai_test_server import OpenAITestServer
from synthesis.models import SynthesisRun

from . import scripted

pytestmark = pytest.mark.django_db

FORM = {"players": 3, "language": "en", "theme": "a country house", "setting": "", "critic_rounds": 1,
        "per_script": 1, "per_image": 1, "model": ""}


@pytest.fixture
def endpoint(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    with OpenAITestServer(responder=scripted.responder()) as server:
        settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL = "test-key", server.base_url
        settings.CASEBOOK_LLM_MODEL, settings.CASEBOOK_LLM_ATTEMPTS = "scripted", 2
        yield server


@pytest.fixture
def author(client, django_user_model):
    user = django_user_model.objects.create_user("writer", password="pw-for-tests-only")
    client.force_login(user)
    return user


def test_new_synthetic_game_page_runs_the_job_and_shows_the_draft(client, author, endpoint):
    page = client.get(reverse("synthesis:new"))
    assert "Requests go to scripted" in page.content.decode()
    response = client.post(reverse("synthesis:new"), FORM)
    job = Job.objects.get(kind="synthesis")
    assert response.url == reverse("synthesis:job", args=[job.pk])
    status = client.get(reverse("synthesis:job_status", args=[job.pk])).json()
    assert status["state"] == "done" and status["done"] == status["total"] and status["game_url"]
    game = Game.objects.get(origin="synthetic")
    assert Membership.objects.get(game=game, user=author).role == "manager"
    record = client.get(status["game_url"]).content.decode()
    assert "No findings" in record and "Round 1" in record and "logical_consistency" in record
    assert "Synthesis record" in client.get(reverse("annotate:workspace", args=[game.slug])).content.decode()
    run = SynthesisRun.objects.get(game=game)
    first = run.records.first()
    detail = client.get(reverse("synthesis:record", args=[game.slug, first.pk])).json()
    assert detail["stage"] == "outline" and "Foxglove Manor" in detail["reply"] and detail["messages"][0]["role"] == "system"


def test_a_failed_stage_is_shown_with_the_reply(client, author, endpoint):
    endpoint.responder = scripted.responder({"cmd": "Sorry, I cannot help with murder."})
    client.post(reverse("synthesis:new"), FORM)
    job = Job.objects.get(kind="synthesis")
    page = client.get(reverse("synthesis:job", args=[job.pk])).content.decode()
    assert job.state == "failed" or Job.objects.get(pk=job.pk).state == "failed"
    assert "Stage <span id=\"fail-stage\">cmd</span> failed" in page and "Sorry, I cannot help" in page
    assert not Game.objects.filter(origin="synthetic").exists()


def test_only_members_see_the_record_and_only_managers_rerun(client, author, endpoint, django_user_model):
    client.post(reverse("synthesis:new"), FORM)
    game = Game.objects.get(origin="synthetic")
    outsider = django_user_model.objects.create_user("outsider", password="pw-for-tests-only")
    annotator = django_user_model.objects.create_user("anna", password="pw-for-tests-only")
    Membership.objects.create(user=annotator, game=game, role="annotator")
    client.force_login(outsider)
    assert client.get(reverse("synthesis:game", args=[game.slug])).status_code == 404
    assert client.post(reverse("synthesis:rerun", args=[game.slug]), {"stage": "clues"}).status_code == 404
    client.force_login(annotator)
    assert "Re-run one stage" not in client.get(reverse("synthesis:game", args=[game.slug])).content.decode()
    before = endpoint.count
    client.post(reverse("synthesis:rerun", args=[game.slug]), {"stage": "clues"})
    assert endpoint.count == before  # refused: nothing was asked
    client.force_login(author)
    response = client.post(reverse("synthesis:rerun", args=[game.slug]), {"stage": "critic"})
    job = Job.objects.filter(kind="synthesis").first()
    assert response.url == reverse("synthesis:job", args=[job.pk]) and endpoint.count == before + 1
    assert len(SynthesisRun.objects.get(game=game).critic_rounds) == 2
