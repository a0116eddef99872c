"""A real Label Studio server for the bridge tests, started once per session.

Reuses a running server when CASEBOOK_LABELSTUDIO_URL and CASEBOOK_LABELSTUDIO_TOKEN are set
(.ci/run starts one); otherwise runs scripts/labelstudio_server.sh, which installs label-studio in
its own virtualenv the first time (~90 s) and starts it (~30 s the first time). Tests skip, with
the reason, only when label-studio cannot be installed (e.g. no network to PyPI) — and fail
then under CI=true.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

from annotate.builder import build_game
from casebook import interchange as ix
from tests.conftest import missing

PROJECT_DIR = Path(__file__).resolve().parents[2]
SCRIPT = PROJECT_DIR / "scripts" / "labelstudio_server.sh"


def pytest_configure(config: pytest.Config) -> None:
    # Also to be registered in pyproject.toml; here so --strict-markers accepts it meanwhile.
    config.addinivalue_line("markers", "labelstudio: talks to a real Label Studio server (scripts/labelstudio_server.sh)")


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=3).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="session")
def labelstudio_server() -> tuple[str, str]:
    """(url, token) of a live Label Studio server on 127.0.0.1."""
    url, token = os.environ.get("CASEBOOK_LABELSTUDIO_URL", ""), os.environ.get("CASEBOOK_LABELSTUDIO_TOKEN", "")
    if url and token:
        if not _healthy(url.rstrip("/")):
            pytest.fail(f"CASEBOOK_LABELSTUDIO_URL={url} is set but nothing answers on /health")
        yield url.rstrip("/"), token
        return
    venv = Path(os.environ.get("CASEBOOK_LABELSTUDIO_VENV", PROJECT_DIR / ".venv-labelstudio"))
    installed = (venv / "bin" / "label-studio").exists()
    proc = subprocess.run(["bash", str(SCRIPT), "start"], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
        if not installed and not (venv / "bin" / "label-studio").exists():
            missing(f"label-studio could not be installed in {venv} (no network to PyPI?):\n{tail}")
        pytest.fail(f"scripts/labelstudio_server.sh could not start Label Studio:\n{tail}")
    values = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    started_here = "reusing" not in proc.stderr
    yield values["CASEBOOK_LABELSTUDIO_URL"], values["CASEBOOK_LABELSTUDIO_TOKEN"]
    if started_here and os.environ.get("CASEBOOK_LABELSTUDIO_KEEP") != "1":
        subprocess.run(["bash", str(SCRIPT), "stop"], cwd=PROJECT_DIR, capture_output=True, timeout=60)


# A small bilingual game: Chinese scripts with an astral character (𠮷, U+20BB7) before the spans,
# an English script, one WellPlay-style MCQ with an LLM distractor, one relationship.
ZH_SCRIPT = ("我是𠮷田·美咲，𠮷田家的长女。昨晚十点，我在书房看见父亲𠮷田·健一喝下了那杯咖啡。\n"
             "我的妹妹𠮷田·由纪说她整晚都在花园，可我在走廊闻到了杏仁味。")
ZH_SCRIPT_2 = "我是由纪。我整晚都在花园里，十一点才回到房间。姐姐美咲一直嫉妒我。"
EN_SCRIPT = "I am Dr. Hale, the family doctor. At ten I heard Kenichi cough in the study; the cup smelled of almonds."


def small_game(slug: str = "ls-bridge-test") -> ix.Game:
    return ix.Game(
        slug=slug, title="𠮷田家の夜 · 杏仁咖啡", language="zh", origin=ix.Origin.WELLPLAY,
        characters=[
            ix.Character(name="𠮷田·美咲", aliases=["美咲"], script=ZH_SCRIPT),
            ix.Character(name="𠮷田·由纪", aliases=["由纪"], script=ZH_SCRIPT_2, is_murderer=True),
            ix.Character(name="𠮷田·健一", aliases=["健一", "Kenichi"], playable=False, is_victim=True),
            ix.Character(name="Dr. Hale", aliases=["Hale"], script=EN_SCRIPT),
        ],
        kills=[ix.Kill(killer="𠮷田·由纪", victim="𠮷田·健一")],
        relationships=[ix.Relationship(source="𠮷田·健一", target="𠮷田·美咲", labels=["daughter of x"])],
        questions=[
            ix.Question(kind=ix.QuestionKind.OBJECTIVE, stem="谁杀死了𠮷田·健一？", answer="b", perspective="𠮷田·美咲",
                        options=[ix.Option("𠮷田·美咲"), ix.Option("𠮷田·由纪", correct=True), ix.Option("Dr. Hale"),
                                 ix.Option("管家", origin=ix.OptionOrigin.LLM, model="smollm2", review=ix.OptionReview.PENDING)]),
            ix.Question(kind=ix.QuestionKind.REASONING, stem="What did the cup smell of?", answer="a", perspective="Dr. Hale",
                        options=[ix.Option("almonds", correct=True), ix.Option("coffee"),
                                 ix.Option("roses", origin=ix.OptionOrigin.HEURISTIC, review=ix.OptionReview.PENDING)]),
        ],
    )


@pytest.fixture
def game(db):
    """The small game in the DB (a fresh slug per test so each test gets its own Label Studio project)."""
    result = build_game(small_game(f"ls-{os.urandom(4).hex()}"))
    assert result.status == "created", result
    return result.game
