"""Upload page → background job (immediate backend) → status JSON → split editor → rebuild."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate import models as m
from casebook.models import Job
from ingest.split import SplitDecision, split_version

from .conftest import panel
from .ingest_makers import png_bytes

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def immediate_tasks(settings, tmp_path):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.DATA_DIR = tmp_path


@pytest.fixture
def member(django_user_model):
    user = django_user_model.objects.create_user("lin", password="pw-12345678")
    other = m.Game.objects.create(slug="other", title="Other", language="en")
    m.Membership.objects.create(user=user, game=other, role="manager")
    return user


def test_access_rules(client, django_user_model):
    assert client.get(reverse("ingest:upload")).status_code == 302  # login first
    django_user_model.objects.create_user("stranger", password="pw-12345678")
    client.login(username="stranger", password="pw-12345678")
    assert client.get(reverse("ingest:upload")).status_code == 403


def test_upload_job_progress_and_split_editor(client, member, en_combined_pdf, clue_card, django_user_model):
    path, parts = en_combined_pdf
    client.login(username="lin", password="pw-12345678")
    page = client.get(reverse("ingest:upload"))
    assert page.status_code == 200 and b'type="file"' in page.content
    response = client.post(reverse("ingest:upload"), {
        "files": [SimpleUploadedFile(path.name, path.read_bytes(), "application/pdf"),
                  SimpleUploadedFile("vitamin.png", png_bytes(panel(clue_card, "vitamin")), "image/png")],
        "title": "Sin", "language": "en", "characters": "",
    })
    job = Job.objects.get(kind="ingest")
    assert response.status_code == 302 and response.url == reverse("ingest:job", args=[job.pk])
    status = client.get(reverse("ingest:job_json", args=[job.pk])).json()
    assert status["state"] == "done", status["message"]
    assert status["result"]["characters"] == list(parts)
    assert status["result"]["image_clues"] == {"media_rich": 1}
    assert client.get(response.url).status_code == 200
    game = m.Game.objects.get(slug=status["game"])
    assert m.Membership.objects.get(user=member, game=game).role == "manager"

    editor = client.get(status["split_url"])
    assert editor.status_code == 200
    html = editor.content.decode()
    assert "Chief Wang" in html and "<img" in html and "heading" in html
    rows = game.extra["ingest"]["split"]
    version = split_version([SplitDecision(**d) for d in rows])
    assert f'name="split-version" value="{version}"' in html
    post = {"rows": str(len(rows)), "split-version": version}
    for i, d in enumerate(rows):
        post.update({f"row-{i}-section": d["section"], f"row-{i}-kind": d["kind"], f"row-{i}-source": d["source"],
                     f"row-{i}-page": str(d["start_page"]), f"row-{i}-offset": str(d["start_offset"]),
                     f"row-{i}-reason": d["reason"]})
        if d["section"] == "Hu Investigate":
            post[f"row-{i}-section"] = "Researcher Hu"
        if d["section"] == "clues" and d["kind"] == "clues" and d["source"] == path.name:
            post[f"row-{i}-kind"] = "manual"  # mark the clue section as part of the manual
    response = client.post(status["split_url"], post)
    assert response.status_code == 302
    game.refresh_from_db()
    names = list(game.characters.values_list("name", flat=True))
    assert names == ["Zhang Villager", "Chief Wang", "Officer Li", "Researcher Hu"]
    assert "Clue 1: a bloody sickle." in game.truth_text and not game.clues.filter(kind="text").exists()
    assert game.clues.filter(kind="image").count() == 1  # the image clue survives the rebuild
    reasons = {d["section"]: d["reason"] for d in game.extra["ingest"]["split"]}
    assert reasons["Researcher Hu"].startswith("corrected in the split editor (found as: ")
    assert not reasons["Chief Wang"].startswith("corrected")  # untouched rows keep the splitter's reason

    # a second manager's tab still holds the old split: its save is refused, nothing changes
    stale = dict(post, **{f"row-{next(i for i, d in enumerate(rows) if d['section'] == 'Chief Wang')}-section": "Boss"})
    response = client.post(status["split_url"], stale, follow=True)
    assert "someone changed this split after you opened it" in response.content.decode()
    assert list(game.characters.values_list("name", flat=True)) == names

    (photo,) = game.clues.filter(kind="image")
    assert photo.image_kind == "media_rich" and photo.key in html
    client.post(status["split_url"], {"image-kinds": "1", f"kind-{photo.key}": "text_rich"})
    photo.refresh_from_db()
    assert photo.image_kind == "text_rich"

    game.refresh_from_db()
    bad = dict(post, **{"row-1-page": "999",
                        "split-version": split_version([SplitDecision(**d) for d in game.extra["ingest"]["split"]])})
    response = client.post(status["split_url"], bad, follow=True)
    assert "Split not applied" in response.content.decode()

    again = client.post(reverse("ingest:upload"), {
        "files": [SimpleUploadedFile(path.name, path.read_bytes(), "application/pdf")],
        "title": "Sin again", "language": "en",
    })
    failed = client.get(again.url.rstrip("/") + ".json").json()
    assert failed["state"] == "failed" and "already ingested into 'Sin'" in failed["message"]
    assert m.Game.objects.filter(title="Sin again").count() == 0

    django_user_model.objects.create_user("eve", password="pw-12345678")
    client.login(username="eve", password="pw-12345678")
    assert client.get(reverse("ingest:job_json", args=[job.pk])).status_code == 404
    assert client.get(status["split_url"]).status_code == 404
