"""Played sessions: import the real WhodunitBench agent logs (and a synthetic ONUW log of N turns),
export them with belief matrices, score an offline baseline; print wall time and SQL queries.

Usage: .venv/bin/python benchmarks/sessions.py [--anchors ../shared/anchors] [--turns 2000]

Runs against a throwaway database in a temporary CASEBOOK_DATA_DIR (or the DATABASE_URL you give).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def synthetic_onuw(turns: int, players: int = 5) -> dict:
    rng = random.Random(0)
    names = [f"player{i + 1}" for i in range(players)]
    messages = []
    for t in range(turns):
        speaker = rng.choice(names)
        target = rng.choice([n for n in names if n != speaker])
        messages.append({"agent_name": speaker, "content": f"I think {target} is the werewolf.", "turn": t,
                         "face": "neutral", "tone": "anger", "sp_actions": [[speaker, "point_as_werewolf", target]],
                         "guesses": {n: {rng.choice(names): "Werewolf"} for n in names}})
    return {"messages": messages}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anchors", type=Path, default=ROOT.parent / "shared" / "anchors")
    parser.add_argument("--turns", type=int, default=2000, help="turns of the synthetic ONUW log")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="casebook-bench-")
    os.environ.setdefault("CASEBOOK_DATA_DIR", data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casebook.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from playlogs.export import write_sessions
    from playlogs.importer import import_session
    from playlogs.readers import read_log

    call_command("migrate", verbosity=0)
    log = Path(data_dir) / "onuw.json"
    log.write_text(json.dumps(synthetic_onuw(args.turns)), encoding="utf-8")
    sources = [(args.anchors / "whodunitbench" / "Dataset" / "DI7MI_2", "whodunitbench", 1),
               (args.anchors / "whodunitbench" / "Dataset" / "XIAOHUA_example", "whodunitbench", 1),
               (args.anchors / "whodunitbench" / "Dataset" / "XIAOHUA_example", "whodunitbench", 2),
               (log, "onuw", 1)]
    print(f"database: {connection.vendor}")
    print(f"{'step':10} {'source':28} {'turns':>6} {'seconds':>8} {'queries':>8}")
    sessions = []
    for path, fmt, run in sources:
        with CaptureQueriesContext(connection) as ctx:
            start = time.perf_counter()
            session = import_session(read_log(path, fmt, run=run))
            elapsed = time.perf_counter() - start
        sessions.append(session)
        print(f"{'import':10} {path.name + ' run ' + str(run):28} {session.turns.count():6d} {elapsed:8.3f} {len(ctx.captured_queries):8d}")
        with CaptureQueriesContext(connection) as ctx:
            start = time.perf_counter()
            write_sessions([session], Path(data_dir) / "export")
            elapsed = time.perf_counter() - start
        print(f"{'export':10} {path.name + ' run ' + str(run):28} {session.turns.count():6d} {elapsed:8.3f} {len(ctx.captured_queries):8d}")
    start = time.perf_counter()
    from io import StringIO

    call_command("evaluate", str(Path(data_dir) / "export"), "--format", "sessions", "--model", "baseline:lexical",
                 "--out", str(Path(data_dir) / "report"), "--no-progress", "--no-charts", stdout=StringIO())
    total = sum(s.turns.count() for s in sessions)
    elapsed = time.perf_counter() - start
    print(f"{'evaluate':10} {'baseline:lexical, all':28} {total:6d} {elapsed:8.3f} {'-':>8}  ({total / elapsed:.0f} turns/s)")


if __name__ == "__main__":
    main()
