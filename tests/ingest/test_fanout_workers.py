"""Two real ``manage.py worker`` processes ingest one scanned package together over the database queue.

Runs on SQLite (a migrated file of its own) and, when ``DATABASE_URL`` is PostgreSQL, on a
database of its own on that server (the test database belongs to this pytest process). The
pages are a small scanned set from the real WellPlay role scripts, so the OCR stays short.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from .ingest_makers import scanned_package
from .workers import (
    batches,
    enqueue,
    finished,
    kill_with_children,
    plan_of,
    query,
    start_worker,
    stop,
    wait_for,
    worker_name,
)
from .workers import queue_env as make_queue_env

pytestmark = pytest.mark.slow  # a migrated database, two worker processes, 16 pages of OCR: ~1-3 min

LEASE = 4  # seconds (CASEBOOK_JOB_LEASE): a killed worker's batch is taken over within a few seconds


@pytest.fixture(scope="module")
def queue_env(tmp_path_factory):
    env, drop = make_queue_env(tmp_path_factory.mktemp("fanout-workers"), os.environ.get("DATABASE_URL", ""),
                               suffix="fanout", CASEBOOK_JOB_LEASE=str(LEASE), CASEBOOK_JOB_HEARTBEAT="1",
                               CASEBOOK_INGEST_BATCH_PAGES="2")
    yield env
    drop()


@pytest.fixture
def package(tmp_path, en_scripts, request) -> Path:
    """4 characters × 2 scanned pages = 4 batches of 2 pages (each test its own text: no duplicate files)."""
    folder = tmp_path / "package"
    folder.mkdir()
    size = 300 + len(request.node.name) % 50
    for name, data in scanned_package(en_scripts, 4, 2, chars_per_page=size).items():
        (folder / name).write_bytes(data)
    return folder


def test_two_workers_share_the_pages_and_one_builds_the_game(queue_env, package, en_scripts, tmp_path):
    a, b = start_worker(queue_env, tmp_path / "a.log"), start_worker(queue_env, tmp_path / "b.log")
    try:
        job_id = enqueue(queue_env, package, "Sin on two workers")
        state, message, summary = wait_for(lambda: finished(queue_env, job_id), 300, every=0.2) or ("timeout", "", {})
    finally:
        logs = stop(a) + stop(b)
    assert state == "done", f"{state}: {message}\n{logs[-3000:]}"
    assert sorted(summary["characters"]) == sorted(list(en_scripts)[:4])
    assert summary["pages_by_method"] == {"ocr": 8}
    rows = batches(queue_env, job_id)
    assert len(rows) == 4 and all(state == "done" for _n, state, _a, _w in rows)
    assert all(attempts == 1 and len(workers) == 1 for _n, _s, attempts, workers in rows)  # no page done twice
    assert {workers[0] for *_rest, workers in rows} == {worker_name(a), worker_name(b)}  # both workers took part
    assert plan_of(queue_env, job_id) == ("done", 1, 8)  # the build ran exactly once
    assert query(queue_env, "SELECT COUNT(*) FROM ingest_pageresult")[0][0] == 0  # results went into the game
    assert query(queue_env, "SELECT COUNT(*) FROM annotate_sourcedocument d JOIN annotate_game g ON d.game_id = g.id"
                            " WHERE g.title = ?", "Sin on two workers")[0][0] == 4


def test_a_killed_workers_batch_runs_again_after_its_lease_expires(queue_env, package, en_scripts, tmp_path):
    a = start_worker(queue_env, tmp_path / "a.log")
    b = None
    try:
        job_id = enqueue(queue_env, package, "Sin with a lost worker")
        held = wait_for(lambda: query(queue_env, "SELECT number FROM ingest_pagebatch WHERE state = 'running'"
                                                 " AND worker = ?", worker_name(a)), 180, every=0.02)
        assert held, f"worker a never claimed a batch: {batches(queue_env, job_id)} {finished(queue_env, job_id)}"
        kill_with_children(a.pid)
        a.wait()
        killed_at = time.monotonic()
        (number,), = held
        assert [r for r in batches(queue_env, job_id) if r[0] == number][0][1] == "running"  # a did not finish it
        b = start_worker(queue_env, tmp_path / "b.log")  # b does the rest, and a's batch once its lease expired
        state, message, summary = wait_for(lambda: finished(queue_env, job_id), 300, every=0.2) or ("timeout", "", {})
        took = time.monotonic() - killed_at
    finally:
        logs = stop(b) if b is not None else ""
        if a.poll() is None:
            a.kill()
    assert state == "done", f"{state}: {message}\n{logs[-3000:]}"
    assert sorted(summary["characters"]) == sorted(list(en_scripts)[:4]) and summary["pages_by_method"] == {"ocr": 8}
    rows = {n: (state, attempts, workers) for n, state, attempts, workers in batches(queue_env, job_id)}
    assert rows[number] == ("done", 2, [worker_name(a), worker_name(b)])  # taken over by b once a's lease expired
    assert all(attempts == 1 for n, (_s, attempts, _w) in rows.items() if n != number)  # nothing else twice
    assert plan_of(queue_env, job_id) == ("done", 1, 8)
    assert took >= LEASE - 1  # not before the lease ran out
