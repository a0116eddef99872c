"""Attacks 4–6: weak passwords, unlimited login guessing, missing HTTPS settings, and the last
manager demoting themselves."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotate.models import Membership

from .conftest import PASSWORD

PROJECT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("weak", ["password", "12345678", "aaaaaaaa", "qwertyuiop"])
def test_weak_passwords_are_refused(db, weak):
    with pytest.raises(ValidationError):
        validate_password(weak)
    validate_password("correct horse battery")


@pytest.mark.django_db
def test_login_is_throttled_with_a_clear_message(client, people, settings):
    settings.CASEBOOK_LOGIN_ATTEMPTS = 5
    cache.clear()
    url = reverse("login")
    for _ in range(5):
        assert client.post(url, {"username": "manager", "password": "wrong"}).status_code == 200
    locked = client.post(url, {"username": "manager", "password": PASSWORD})  # even the right one, for now
    assert locked.status_code == 429 and "Too many failed logins" in locked.content.decode()
    assert "_auth_user_id" not in client.session
    other = client.post(url, {"username": "reviewer", "password": PASSWORD})  # other accounts are unaffected
    assert other.status_code == 302
    cache.clear()
    assert client.post(url, {"username": "manager", "password": PASSWORD}).status_code == 302


@pytest.mark.django_db
def test_the_last_manager_cannot_leave_or_be_demoted(client, people, victim):
    client.force_login(people["manager"])
    url = reverse("annotate:members", args=[victim.slug])
    for role in ("annotator", "reviewer", "remove"):
        response = client.post(url, {"username": "manager", "role": role}, follow=True)
        assert "last manager" in response.content.decode()
        assert Membership.objects.get(game=victim, user=people["manager"]).role == "manager"
    client.post(url, {"username": "reviewer", "role": "manager"})
    client.post(url, {"username": "manager", "role": "annotator"})
    assert Membership.objects.get(game=victim, user=people["manager"]).role == "annotator"


def deploy_check(**env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CASEBOOK_HTTPS", "DJANGO_"))}
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=PROJECT, env={**clean, **env}, capture_output=True, text=True, timeout=120)


def test_check_deploy_is_clean_under_the_documented_production_settings(tmp_path):
    plain = deploy_check(CASEBOOK_DATA_DIR=str(tmp_path))
    assert plain.returncode != 0 and "SECURE_SSL_REDIRECT" in plain.stderr + plain.stdout
    production = deploy_check(CASEBOOK_DATA_DIR=str(tmp_path), CASEBOOK_HTTPS="1",
                              DJANGO_ALLOWED_HOSTS="casebook.example.org")
    assert production.returncode == 0, production.stderr + production.stdout
    assert "no issues" in production.stdout


@pytest.mark.django_db
def test_label_studio_token_never_sits_in_job_params_in_plain_text(victim, people):
    import json

    from labelstudio.tasks import create_job, run_job

    token = "ls-secret-token-4f2a9c"
    job = create_job(victim, "pull", url="http://127.0.0.1:9", token=token, user=people["manager"])
    job.refresh_from_db()
    assert token not in json.dumps(job.params) and job.params["sealed_token"]
    run_job(job.pk)  # nothing listens there: the job fails, but it did decrypt and wipe the token
    job.refresh_from_db()
    assert "sealed_token" not in job.params and token not in json.dumps(job.params)
    assert job.state == "failed" and "decrypt" not in job.message
