"""Real ``manage.py worker`` processes on a database of their own, for tests and ``benchmarks/ingest_speed.py``.

No Django in the calling process: the workers' database is read with ``sqlite3`` / ``psycopg``
(pytest's own database is another one).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent.parent
ENQUEUE = """
import os, pathlib
from django.core.files.uploadedfile import SimpleUploadedFile
from ingest.pipeline import IngestOptions
from ingest.tasks import start_upload_job
folder = pathlib.Path(os.environ["PACKAGE"])
files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(folder.iterdir())]
options = IngestOptions(title=os.environ["TITLE"], language=os.environ.get("LANGUAGE", "en"))
print(start_upload_job(None, files, options).pk)
"""


def is_postgres(url: str) -> bool:
    return url.startswith(("postgres://", "postgresql://"))


def queue_env(folder: Path, database_url: str = "", suffix: str = "workers", **extra: str) -> tuple[dict, Callable]:
    """(environment, drop) of a migrated database and data folder that worker processes share.

    SQLite: a file in ``folder``. PostgreSQL: a database ``<name>_<suffix>`` beside the one in
    ``database_url`` (created fresh; ``drop()`` removes it).
    """
    env = {k: v for k, v in os.environ.items() if k not in {"CASEBOOK_TASK_BACKEND", "DATABASE_URL"}}
    env.update(CASEBOOK_DATA_DIR=str(folder), OMP_THREAD_LIMIT="1", **extra)
    drop: Callable[[], None] = lambda: None  # noqa: E731
    if is_postgres(database_url):
        import psycopg

        parts = urlsplit(database_url)
        name = f"{parts.path.lstrip('/')}_{suffix}"
        admin_url = urlunsplit(parts._replace(path="/postgres"))
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}"')
        env["DATABASE_URL"] = urlunsplit(parts._replace(path="/" + name))

        def drop() -> None:
            with psycopg.connect(admin_url, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True, timeout=300)
    return env, drop


def query(env: dict, sql: str, *params) -> list[tuple]:
    """Run ``sql`` (``?`` placeholders) on the workers' database."""
    if is_postgres(env.get("DATABASE_URL", "")):
        import psycopg

        with psycopg.connect(env["DATABASE_URL"]) as conn:
            return conn.execute(sql.replace("?", "%s"), params).fetchall()
    conn = sqlite3.connect(Path(env["CASEBOOK_DATA_DIR"]) / "casebook.sqlite3", timeout=30)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def wait_for(predicate, timeout: float, every: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    return None


def start_worker(env: dict, log: Path) -> subprocess.Popen:
    """A worker, returned once it polls the queue (under load a Django start-up takes seconds)."""
    with open(log, "w") as out:
        worker = subprocess.Popen([sys.executable, "manage.py", "worker", "--queue-name", "*", "--interval", "0.2"],
                                  cwd=ROOT, env={**env, "CASEBOOK_LOG_LEVEL": "INFO"}, stdout=subprocess.DEVNULL,
                                  stderr=out, text=True)
    worker.log = log  # type: ignore[attr-defined]
    if not wait_for(lambda: "Starting worker" in log.read_text() or worker.poll() is not None, 120, every=0.1) \
            or worker.poll() is not None:
        stop(worker)
        raise RuntimeError(f"the worker did not start: {log.read_text()[-3000:]}")
    return worker


def stop(worker: subprocess.Popen) -> str:
    """Stop the worker (SIGTERM, then SIGKILL after 20 s); its log."""
    if worker.poll() is None:
        worker.terminate()
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
    return worker.log.read_text()  # type: ignore[attr-defined]


def kill_with_children(pid: int) -> None:
    """SIGKILL a worker and its tesseract child (as the OOM killer or a pulled plug would)."""
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    children.append(int(entry.name))
    os.kill(pid, signal.SIGKILL)
    for child in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


def worker_name(worker: subprocess.Popen) -> str:
    """The worker id it claims batches under (``casebook.jobs.worker_id``)."""
    return f"{socket.gethostname()}:{worker.pid}"


def enqueue(env: dict, package: Path, title: str, language: str = "en") -> int:
    """Upload the package's files as an ingest job (as the upload page does); the job id."""
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", ENQUEUE], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, check=True,
                         env={**env, "PACKAGE": str(package), "TITLE": title, "LANGUAGE": language})
    return int(out.stdout.split()[-1])


def finished(env: dict, job_id: int) -> tuple | None:
    """(state, message, result) once the job has ended."""
    row = query(env, "SELECT state, message, result FROM annotate_job WHERE id = ?", job_id)[0]
    if row[0] not in ("done", "failed", "interrupted"):
        return None
    return row[0], row[1], json.loads(row[2]) if isinstance(row[2], str) else row[2]


def batches(env: dict, job_id: int) -> list[tuple[int, str, int, list[str]]]:
    """(number, state, attempts, workers) of each page batch of the job."""
    rows = query(env, "SELECT b.number, b.state, b.attempts, b.workers FROM ingest_pagebatch b JOIN ingest_ingestplan p"
                      " ON b.plan_id = p.id WHERE p.job_id = ? ORDER BY b.number", job_id)
    return [(n, state, attempts, workers if isinstance(workers, list) else json.loads(workers))
            for n, state, attempts, workers in rows]


def plan_of(env: dict, job_id: int) -> tuple[str, int, int]:
    """(build state, build runs, pages) of the job's plan."""
    return query(env, "SELECT build, build_runs, pages FROM ingest_ingestplan WHERE job_id = ?", job_id)[0]
