"""``manage.py worker``: django-tasks-db's ``db_worker`` that survives database hiccups.

``db_worker`` exits for good on an ``OperationalError`` (e.g. a lock held longer than the busy
timeout). This command runs it in a loop: on a database error it logs, waits (1 s, doubling up to
30 s) and starts polling again; it only exits on a signal (Ctrl-C / SIGTERM) or at the end of
``--batch`` / ``--max-tasks``. It also reaps jobs of dead workers (:mod:`casebook.jobs`)
and gives each worker a private temporary folder under the data dir, removed when it exits and
by the next worker when it was killed.
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, close_old_connections
from django_tasks_db.management.commands.db_worker import Command as DbWorkerCommand

from casebook.jobs import reap_all, reaper_loop

log = logging.getLogger("casebook.worker")

MAX_BACKOFF = 30.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def private_tmpdir() -> Path:
    """``<data dir>/tmp/worker-<host>-<pid>``, after removing the folders of this machine's workers no
    longer running (the data folder may be shared by workers on other machines: theirs are left alone)."""
    root = Path(settings.DATA_DIR) / "tmp"
    root.mkdir(exist_ok=True)
    host = socket.gethostname()
    for old in root.glob("worker-*"):
        pid = old.name.removeprefix("worker-").removeprefix(f"{host}-")  # (worker-<pid>: before host names)
        if pid.isdigit() and not _alive(int(pid)):
            log.warning("removing %s left behind by a worker that was killed", old)
            shutil.rmtree(old, ignore_errors=True)
    mine = root / f"worker-{host}-{os.getpid()}"
    mine.mkdir(exist_ok=True)
    return mine


class Command(DbWorkerCommand):
    help = ("Run the background job worker (db_worker) and keep it running through database errors; "
            "also marks jobs of dead workers interrupted.")

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--max-backoff", type=float, default=MAX_BACKOFF,
                            help="longest wait in seconds between restarts after database errors (default 30)")

    def handle(self, *args, max_backoff: float = MAX_BACKOFF, **options):
        tmp = private_tmpdir()
        os.environ["TMPDIR"] = str(tmp)  # OCR pool processes inherit it
        tempfile.tempdir = str(tmp)
        # Until db_worker installs its own handlers: SIGTERM during a back-off ends cleanly.
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
        stop = threading.Event()
        reaper = threading.Thread(target=reaper_loop, args=(stop,), name="job-reaper", daemon=True)
        reaper.start()
        backoff = 1.0
        try:
            while True:
                started = time.monotonic()
                try:
                    reap_all()
                    super().handle(*args, **options)
                    return
                except DatabaseError as exc:
                    if time.monotonic() - started > 60:
                        backoff = 1.0  # it ran fine for a while: this is a new hiccup
                    log.warning("worker: database error (%s: %s); polling again in %.0f s",
                                exc.__class__.__name__, exc, backoff)
                    close_old_connections()
                    time.sleep(backoff)
                    backoff = min(backoff * 2, max_backoff)
        finally:
            stop.set()
            shutil.rmtree(tmp, ignore_errors=True)
