"""Fixtures of the played-session tests: own-made logs in fixtures/playlogs and users with roles."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotate.models import Membership
from casebook.openai_test_server import OpenAITestServer
from playlogs.importer import import_session
from playlogs.models import Session
from playlogs.readers import read_log
from tests.conftest import missing

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "playlogs"
ANCHORS = Path(os.environ.get("CASEBOOK_ANCHORS", Path(__file__).resolve().parents[3] / "shared" / "anchors")).resolve()
PASSWORD = "correct horse battery"


def load(name: str, fmt: str, **kwargs) -> Session:
    return import_session(read_log(LOGS / name, fmt, **kwargs))


@pytest.fixture
def onuw(db) -> Session:
    return load("onuw_small.json", "onuw")


@pytest.fixture
def transcript(db) -> Session:
    return load("transcript.csv", "csv")


@pytest.fixture
def member(db, django_user_model):
    def make(session: Session, role: str = Membership.Role.ANNOTATOR, name: str = "anna"):
        user = django_user_model.objects.create_user(name, password=PASSWORD)
        Membership.objects.create(user=user, game=session.game, role=role)
        return user

    return make


@pytest.fixture
def llm_server(settings):
    with OpenAITestServer(reply="{}") as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.CASEBOOK_LLM_MODEL = "test-model"
        settings.CASEBOOK_LLM_ATTEMPTS = 2
        yield server


@pytest.fixture
def no_llm(settings):
    settings.OPENAI_API_KEY = ""
    return settings


@pytest.fixture(scope="session")
def whodunitbench_anchor() -> Path:
    """The real WhodunitBench folders; missing is a failure under CI=true, a skip elsewhere (tests.conftest.missing)."""
    path = ANCHORS / "whodunitbench" / "Dataset"
    if not (path / "DI7MI_2").is_dir():
        missing(f"real WhodunitBench agent logs not found at {path} (set CASEBOOK_ANCHORS)")
    return path
