"""Fixtures of the security tests: two games, one user per role on the first, an outsider who
manages only a game of their own (anyone may create one), and the immediate task backend."""
from __future__ import annotations

import pytest

from annotate.models import Game, Membership
from tests.web.conftest import make_game

PASSWORD = "correct horse battery"
ROLES = ("annotator", "reviewer", "manager")


@pytest.fixture(autouse=True)
def fast_hasher_and_immediate_tasks(settings, tmp_path):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.DATA_DIR = tmp_path


@pytest.fixture
def victim(db) -> Game:
    """The game under attack: imported, with questions and characters."""
    game = make_game("victim", questions=4)
    Game.objects.filter(pk=game.pk).update(origin="imported-wellplay", source_id="victim")
    game.refresh_from_db()
    return game


@pytest.fixture
def people(db, django_user_model, victim) -> dict:
    """One user per role on ``victim``, plus ``outsider`` who manages only their own game."""
    users = {}
    for role in ROLES:
        users[role] = django_user_model.objects.create_user(role, password=PASSWORD)
        Membership.objects.create(user=users[role], game=victim, role=role)
    users["outsider"] = django_user_model.objects.create_user("outsider", password=PASSWORD)
    own = make_game("outsiders-own", questions=1)
    Membership.objects.create(user=users["outsider"], game=own, role="manager")
    return users
