"""Under CI=true a missing required component fails the run instead of skipping (issue 13, item 12).

Runs pytest itself on one real anchor test and one real browser test with the component pointed
at a path that does not exist: without CI the test skips with the reason, with CI=true it fails.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import PROJECT_DIR

CASES = [
    ("CASEBOOK_ANCHORS", "tests/exporters/test_wellplay_reader.py::test_anchor_g3_reads_cleanly", "real anchor data not found"),
    ("CASEBOOK_CHROMIUM", "tests/review/test_browser.py::test_reviewer_rejects_with_reason_and_annotator_sees_it",
     "is not installed"),
]


def _run(test_id: str, env_name: str, ci: str | None, tmp_path) -> subprocess.CompletedProcess:
    # SQLite in the child run: on PostgreSQL it would recreate (and drop) this run's test database.
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "DATABASE_URL"}}
    env[env_name] = str(tmp_path / "absent")
    env.setdefault("CASEBOOK_DATA_DIR", str(tmp_path / "data"))
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rsfE", test_id],
                          cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("env_name,test_id,reason", CASES, ids=["anchors", "chromium"])
def test_missing_component_skips_locally_and_fails_under_ci(env_name, test_id, reason, tmp_path):
    local = _run(test_id, env_name, None, tmp_path)
    assert local.returncode == 0 and "1 skipped" in local.stdout and reason in local.stdout, local.stdout[-2000:]
    ci = _run(test_id, env_name, "true", tmp_path)
    assert ci.returncode == 1, ci.stdout[-2000:]
    assert "required under CI=true" in ci.stdout and reason in ci.stdout and "skipped" not in ci.stdout
