"""The session pages and their JSON endpoints: roles, validation, version conflicts."""
from __future__ import annotations

import json

import pytest

from annotate.models import Membership
from playlogs.models import TurnAnnotation

pytestmark = pytest.mark.django_db


def post(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def test_pages_and_endpoints(client, transcript, member, django_user_model, no_llm):
    anna = member(transcript)
    base = f"/g/{transcript.game.slug}/sessions/{transcript.pk}/"
    client.force_login(django_user_model.objects.create_user("otto"))
    assert client.get(base).status_code == 404
    assert post(client, f"{base}turns/1/", {"triplets": []}).status_code == 404
    client.force_login(anna)
    assert client.get(base).context["data"]["turns"][1]["others"] == []
    listing = client.get(f"/g/{transcript.game.slug}/sessions/")
    assert listing.status_code == 200 and transcript.title in listing.content.decode()
    page = client.get(base)
    assert page.status_code == 200 and "pl-heat" in page.content.decode()
    assert page.context["data"]["actions"] == ["support", "suspect", "accuse_as_murderer"]
    body = {"triplets": [["小红", "suspect", "林管家"]], "face": "fear", "suspicions": {"小红": ["林管家"]}, "version": None}
    saved = post(client, f"{base}turns/1/", body)
    assert saved.status_code == 200 and saved.json()["annotation"]["version"] == 1
    stale = post(client, f"{base}turns/1/", {**body, "face": "sad", "version": None})
    assert stale.status_code == 409 and "reload" in stale.json()["error"]
    bad = post(client, f"{base}turns/1/", {**body, "face": "bored", "version": 1})
    assert bad.status_code == 400 and "face 'bored'" in bad.json()["error"]
    assert TurnAnnotation.objects.get(annotator=anna).face == "fear"
    suggestion = post(client, f"{base}turns/1/suggest/", {"previous": {}})
    assert suggestion.json()["suggestion"]["triplets"] == [["小红", "suspect", "林管家"]]
    ann = TurnAnnotation.objects.get(annotator=anna)
    approve = post(client, f"{base}annotations/{ann.pk}/approve/", {"version": 1})
    assert approve.status_code == 400 and "reviewer" in approve.json()["error"]
    submit = post(client, f"{base}annotations/{ann.pk}/submit/", {"version": 1})
    assert submit.status_code == 200 and submit.json()["annotation"]["status"] == "submitted"
    rita = member(transcript, Membership.Role.REVIEWER, "rita")
    client.force_login(rita)
    others = client.get(base).context["data"]["turns"][1]["others"]
    assert [(o["annotator"], o["status"]) for o in others] == [("anna", "submitted")]  # reviewers see submitted work
    assert post(client, f"{base}annotations/{ann.pk}/approve/", {"version": 1}).status_code == 409  # stale
    assert post(client, f"{base}annotations/{ann.pk}/reject/", {"version": 2}).json()["error"].startswith("Say why")
    rejected = post(client, f"{base}annotations/{ann.pk}/reject/", {"version": 2, "reason": "林管家 is not named"})
    assert rejected.json()["annotation"]["reason"] == "林管家 is not named"
    client.force_login(anna)
    assert client.get(base).context["data"]["turns"][1]["mine"]["reason"] == "林管家 is not named"
    assert post(client, f"{base}annotations/{ann.pk}/submit/", {"version": 3}).status_code == 200  # resubmitted
    client.force_login(rita)
    assert post(client, f"{base}annotations/{ann.pk}/approve/", {"version": 4}).json()["annotation"]["status"] == "approved"


def test_real_whodunitbench_session_page(client, whodunitbench_anchor, django_user_model):
    from django.core.management import call_command

    from playlogs.models import Session

    call_command("import_session", str(whodunitbench_anchor / "DI7MI_2"), "--format", "whodunitbench")
    session = Session.objects.latest("pk")
    client.force_login(django_user_model.objects.create_superuser("root"))
    data = client.get(f"/g/{session.game.slug}/sessions/{session.pk}/").context["data"]
    assert len(data["players"]) == session.players.count() and len(data["turns"]) == session.turns.count()
    votes = [t for t in data["turns"] if t["phase"] == "vote"]
    assert votes and all(t["reference"]["source"] == "imported" for t in votes if t["reference"])


def test_upload_a_log_on_the_session_list(client, transcript, member):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from playlogs.models import Session

    from .conftest import LOGS

    client.force_login(member(transcript))
    url = f"/g/{transcript.game.slug}/sessions/"
    bad = SimpleUploadedFile("bad.csv", "speaker,text\n小红,\n".encode())
    page = client.post(url, {"log": bad, "format": "csv", "title": "bad"})
    assert page.status_code == 200 and "line 2: text missing or empty" in page.content.decode()
    assert Session.objects.count() == 1
    good = SimpleUploadedFile("onuw.json", (LOGS / "onuw_small.json").read_bytes())
    page = client.post(url, {"log": good, "format": "onuw", "session_type": "onuw", "title": "night 1"})
    session = Session.objects.latest("pk")
    assert page.status_code == 302 and page["Location"].endswith(f"/sessions/{session.pk}/")
    assert session.game == transcript.game and session.title == "night 1" and session.turns.count() == 3
