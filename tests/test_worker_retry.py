"""The job worker outlives a database lock held longer than its busy timeout (real processes, a real SQLite file).

``db_worker`` itself exits for good on such a lock; ``manage.py worker`` logs, backs off and goes on.
"""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # two real worker processes and a migrated SQLite file: ~30-80 s

ROOT = Path(__file__).resolve().parent.parent
ENQUEUE = """
from django.core.files.uploadedfile import SimpleUploadedFile
from ingest.pipeline import IngestOptions
from ingest.tasks import start_upload_job
text = "主持人手册\\n真相：管家在十点进了书房。\\n".encode()
print(start_upload_job(None, [SimpleUploadedFile("manual.txt", text)], IngestOptions(title="锁之后", language="zh")).pk)
"""


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("worker-retry")
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CASEBOOK_TASK_BACKEND"}}
    env.update(CASEBOOK_DATA_DIR=str(folder), CASEBOOK_SQLITE_TIMEOUT="0.3")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True, timeout=300)
    return env


def _hold_lock(env) -> sqlite3.Connection:
    holder = sqlite3.connect(Path(env["CASEBOOK_DATA_DIR"]) / "casebook.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def _worker(env, command: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "manage.py", command, "--queue-name", "*", "--interval", "0.2",
                             "--max-backoff", "1"] if command == "worker" else
                            [sys.executable, "manage.py", command, "--queue-name", "*", "--interval", "0.2"],
                            cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)


def test_db_worker_dies_on_a_long_lock_the_casebook_worker_does_not(data_dir):
    holder = _hold_lock(data_dir)
    plain = _worker(data_dir, "db_worker")
    ours = _worker(data_dir, "worker")
    try:
        assert plain.wait(60) != 0 and "database is locked" in plain.stderr.read()  # the reported defect
        time.sleep(3)
        assert ours.poll() is None
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    try:
        job_id = int(subprocess.run([sys.executable, "manage.py", "shell", "-c", ENQUEUE], cwd=ROOT, env=data_dir,
                                    capture_output=True, text=True, check=True, timeout=120).stdout.split()[-1])
        db = sqlite3.connect(Path(data_dir["CASEBOOK_DATA_DIR"]) / "casebook.sqlite3")
        state = None
        for _ in range(300):
            state = db.execute("SELECT state FROM annotate_job WHERE id = ?", (job_id,)).fetchone()[0]
            if state in ("done", "failed"):
                break
            time.sleep(0.2)
        db.close()
        assert state == "done"  # the job queued after the lock ran on the same worker
        assert ours.poll() is None
    finally:
        ours.terminate()
        ours.wait(20)
    log = ours.stderr.read()
    assert "worker: database error (OperationalError: database is locked); polling again in" in log
    assert not list((Path(data_dir["CASEBOOK_DATA_DIR"]) / "tmp").glob("worker-*"))  # its temp folder went with it
