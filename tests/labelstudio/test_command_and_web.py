"""The management command and the game page (background jobs with progress) against a real server."""
from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate.models import EvidenceSpan, Membership
from casebook.models import Job
from labelstudio.client import LabelStudioClient
from labelstudio.models import LabelStudioLink, LabelStudioTask

from .conftest import EN_SCRIPT

pytestmark = [pytest.mark.labelstudio, pytest.mark.django_db]


@pytest.fixture
def immediate_tasks(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


def _annotate_hale(game, url: str, token: str) -> None:
    link = LabelStudioLink.objects.get(game=game)
    hale = game.characters.get(name="Dr. Hale")
    task_id = LabelStudioTask.objects.get(link=link, kind="script", object_id=hale.pk).task_id
    start = EN_SCRIPT.index("almonds")
    LabelStudioClient(url, token).create_annotation(task_id, [{
        "id": "a1", "from_name": "span", "to_name": "text", "type": "labels",
        "value": {"start": start, "end": start + 7, "text": "almonds", "labels": ["clue"]}}])


def test_command_push_and_pull_by_source_id(game, labelstudio_server, capsys):
    url, token = labelstudio_server
    game.source_id = "zh/杏仁咖啡"
    game.save(update_fields=["source_id"])
    call_command("labelstudio", "push", "zh/杏仁咖啡", "--url", url, "--token", token, "--kinds", "spans")
    out = capsys.readouterr().out
    assert "3 task(s) created" in out and "/projects/" in out
    assert LabelStudioLink.objects.get(game=game).kinds == ["spans"]
    _annotate_hale(game, url, token)
    call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token, "--json")
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["created"] == {"span": 1}
    assert EvidenceSpan.objects.get(game=game).quote == "almonds"
    call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token)
    assert "0 created; 0 updated; 1 unchanged (1 span); 0 skipped" in capsys.readouterr().out


def test_command_errors_are_messages(game, labelstudio_server):
    url, token = labelstudio_server
    with pytest.raises(CommandError, match="no game with slug or source id"):
        call_command("labelstudio", "push", "missing", "--url", url, "--token", token)
    with pytest.raises(CommandError, match="unknown kind"):
        call_command("labelstudio", "push", game.slug, "--url", url, "--token", token, "--kinds", "images")
    with pytest.raises(CommandError, match="pull failed: .*not been pushed"):
        call_command("labelstudio", "pull", game.slug, "--url", url, "--token", token)
    with pytest.raises(CommandError, match="refused the access token"):
        call_command("labelstudio", "push", game.slug, "--url", url, "--token", "f" * 40)


def test_page_access_by_role(game, client, django_user_model):
    page = reverse("labelstudio:game", kwargs={"slug": game.slug})
    outsider = django_user_model.objects.create_user("outsider")
    annotator = django_user_model.objects.create_user("annotator")
    manager = django_user_model.objects.create_user("manager")
    Membership.objects.create(user=annotator, game=game, role="annotator")
    Membership.objects.create(user=manager, game=game, role="manager")
    assert client.get(page).status_code == 302  # to the login page
    client.force_login(outsider)
    assert client.get(page).status_code == 404
    client.force_login(annotator)
    assert client.get(page).status_code == 403
    assert client.post(reverse("labelstudio:start", kwargs={"slug": game.slug}), {"action": "pull"}).status_code == 403
    client.force_login(manager)
    response = client.get(page)
    assert response.status_code == 200 and "Push to Label Studio" in response.content.decode()
    bad = client.post(reverse("labelstudio:start", kwargs={"slug": game.slug}), {"action": "push", "url": "nope", "token": ""})
    assert bad.status_code == 400 and not Job.objects.exists()


def test_push_and_pull_jobs_from_the_page(game, client, django_user_model, labelstudio_server, immediate_tasks):
    url, token = labelstudio_server
    manager = django_user_model.objects.create_user("boss")
    Membership.objects.create(user=manager, game=game, role="manager")
    client.force_login(manager)
    start = reverse("labelstudio:start", kwargs={"slug": game.slug})

    response = client.post(start, {"action": "push", "url": url, "token": token, "kinds": ["spans", "relations", "questions"]})
    assert response.status_code == 302
    job = Job.objects.get(kind="labelstudio-push")
    assert job.state == Job.State.DONE, job.message
    assert "token" not in job.params  # the token is not kept once the job has run
    status = client.get(reverse("labelstudio:job_status", kwargs={"slug": game.slug, "job_pk": job.pk})).json()
    assert status["finished"] and status["done"] == status["total"] == 5 and "/projects/" in status["project_url"]
    page = client.get(response["Location"]).content.decode()
    assert f"job {job.pk}" in page.lower() and "5 task(s) created" in page

    _annotate_hale(game, url, token)
    client.post(start, {"action": "pull", "url": url, "token": token})
    pull = Job.objects.get(kind="labelstudio-pull")
    assert pull.state == Job.State.DONE and pull.result["counts"]["created"] == {"span": 1}
    assert EvidenceSpan.objects.get(game=game).created_by == manager

    client.post(start, {"action": "pull", "url": url, "token": "0" * 40})
    failed = Job.objects.filter(kind="labelstudio-pull").order_by("-pk").first()
    assert failed.state == Job.State.FAILED and "refused the access token" in failed.message
    assert "Nothing was changed in Casebook" in failed.message
    status = client.get(reverse("labelstudio:job_status", kwargs={"slug": game.slug, "job_pk": failed.pk})).json()
    assert status["finished"] and status["state"] == "failed"


def test_a_pull_from_the_page_lists_deletions_and_can_keep_them(game, client, django_user_model, labelstudio_server,
                                                                 immediate_tasks):
    url, token = labelstudio_server
    manager = django_user_model.objects.create_user("lead")
    Membership.objects.create(user=manager, game=game, role="manager")
    client.force_login(manager)
    start = reverse("labelstudio:start", kwargs={"slug": game.slug})
    client.post(start, {"action": "push", "url": url, "token": token, "kinds": ["spans"]})
    _annotate_hale(game, url, token)
    client.post(start, {"action": "pull", "url": url, "token": token})
    ls = LabelStudioClient(url, token)
    for task in ls.export_tasks(LabelStudioLink.objects.get(game=game).project_id):
        for annotation in task["annotations"]:
            ls.sdk.annotations.delete(id=annotation["id"])
    response = client.post(start, {"action": "pull", "url": url, "token": token, "keep_deleted": "on"})
    job = Job.objects.filter(kind="labelstudio-pull").order_by("-pk").first()
    assert job.params["keep_deleted"] is True and job.state == Job.State.DONE, job.message
    status = client.get(reverse("labelstudio:job_status", kwargs={"slug": game.slug, "job_pk": job.pk})).json()
    (item,) = status["skipped"]
    assert item["kind"] == "deleted span" and "kept in Casebook" in item["detail"]
    assert EvidenceSpan.objects.get(game=game).state == "draft"
    page = client.get(response["Location"]).content.decode()
    assert "deleted span · task" in page and "Keep items deleted in Label Studio" in page
