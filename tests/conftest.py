"""Shared test fixtures.

The real published data lives in ../shared/anchors (never copied into the project); tests that
need it use the ``anchors`` fixture, which skips with a reason when the folder is absent.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # tesseract is ~5x slower with OpenMP threads here
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright + live_server teardown

PROJECT_DIR = Path(__file__).resolve().parent.parent
ANCHORS_DIR = Path(os.environ.get("CASEBOOK_ANCHORS", PROJECT_DIR.parent / "shared" / "anchors")).resolve()
FIXTURES_DIR = PROJECT_DIR / "fixtures"


@pytest.fixture(scope="session")
def anchors() -> Path:
    """The shared anchors folder (wellplay/, whodunitbench/); skips when absent."""
    if not (ANCHORS_DIR / "wellplay").is_dir() or not (ANCHORS_DIR / "whodunitbench").is_dir():
        pytest.skip(f"real anchor data not found at {ANCHORS_DIR} (set CASEBOOK_ANCHORS to its path)")
    return ANCHORS_DIR


@pytest.fixture(scope="session")
def wellplay_anchor(anchors: Path) -> Path:
    return anchors / "wellplay"


@pytest.fixture(scope="session")
def whodunitbench_anchor(anchors: Path) -> Path:
    return anchors / "whodunitbench" / "Dataset"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES_DIR
