"""Fixtures of the generation tests: the real Sin / Deadly Fountain anchors imported through the lead's
``import_dataset`` command, a local OpenAI-compatible server, and the immediate task backend."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from annotate.models import Game, Membership, Option, Question
from casebook.openai_test_server import OpenAITestServer

SIN_G1_ZH = "legacy-195be0c/chinese/131-罪恶（4人封闭）"  # has the all.json relationship graph
FOUNTAIN_G1_ZH = "legacy-195be0c/chinese/134-致命喷泉（4人封闭）"
SIN_EN = "english/Sin (4 people closed)"


def import_game(path: Path) -> Game:
    before = set(Game.objects.values_list("pk", flat=True))
    call_command("import_dataset", str(path), format="wellplay", verbosity=0, quiet_report=True)
    created = Game.objects.exclude(pk__in=before)
    assert created.count() == 1, f"expected one game from {path}"
    return created.get()


@pytest.fixture
def sin_zh(db, wellplay_anchor) -> Game:
    return import_game(wellplay_anchor / SIN_G1_ZH)


@pytest.fixture
def sin_en(db, wellplay_anchor) -> Game:
    return import_game(wellplay_anchor / SIN_EN)


@pytest.fixture
def fountain_zh(db, wellplay_anchor) -> Game:
    return import_game(wellplay_anchor / FOUNTAIN_G1_ZH)


def bare_copy(question: Question, stem: str | None = None) -> Question:
    """A new draft question with the same stem/kind and only the correct option (what an author writes)."""
    correct = question.options.get(is_correct=True)
    copy = Question.objects.create(
        game=question.game, kind=question.kind, sub_type=question.sub_type, stem=stem or question.stem,
        answer="a", perspective=question.perspective, position=1000 + question.position, status="draft",
    )
    Option.objects.create(question=copy, position=0, text=correct.text, is_correct=True, origin="human")
    return copy


@pytest.fixture
def immediate_tasks(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    return settings


@pytest.fixture
def llm_server(settings):
    """A local OpenAI-compatible server, configured as the endpoint."""
    with OpenAITestServer(reply='{"distractors": []}') as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.CASEBOOK_LLM_MODEL = "test-model"
        settings.CASEBOOK_LLM_TIMEOUT = 5
        settings.CASEBOOK_LLM_ATTEMPTS = 3
        settings.CASEBOOK_LLM_CONCURRENCY = 2
        yield server


@pytest.fixture
def no_llm(settings):
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = ""  # a base URL alone (keyless local server) also counts as configured
    return settings


@pytest.fixture
def member(db, django_user_model):
    def make(game: Game, role: str = Membership.Role.ANNOTATOR, name: str = "anna"):
        user = django_user_model.objects.create_user(name, password="pw-12345678")
        Membership.objects.create(user=user, game=game, role=role)
        return user

    return make


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Logins in these tests need no real key stretching."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
