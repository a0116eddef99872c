"""Import every anchor game, export every game in every format; print wall time and SQL queries.

Usage: .venv/bin/python benchmarks/import_export.py [--anchors ../shared/anchors] [--repeat 3]

Runs against a throwaway database in a temporary CASEBOOK_DATA_DIR (or the DATABASE_URL you
give, e.g. a PostgreSQL server), so it never touches your data.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anchors", type=Path, default=ROOT.parent / "shared" / "anchors")
    parser.add_argument("--repeat", type=int, default=3, help="exports per game and format (best time kept)")
    args = parser.parse_args()
    if not args.anchors.is_dir():
        sys.exit(f"anchors not found at {args.anchors}")

    data_dir = tempfile.mkdtemp(prefix="casebook-bench-")
    os.environ.setdefault("CASEBOOK_DATA_DIR", data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casebook.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotate.builder import build_game
    from annotate.models import Game
    from exporters.service import EXPORT_FORMATS, export_games, import_dataset, read_dataset

    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor} ({os.environ.get('DATABASE_URL', 'SQLite in ' + data_dir)})")
    print(f"{'step':38} {'game':34} {'seconds':>8} {'queries':>8} {'questions':>9}")
    sources = [("wellplay", args.anchors / "wellplay"), ("wellplay", args.anchors / "wellplay" / "legacy-195be0c"),
               ("whodunitbench", args.anchors / "whodunitbench" / "Dataset")]
    for fmt, path in sources:
        start = time.perf_counter()
        result = read_dataset(fmt, path)
        print(f"{'read ' + fmt + ' (' + path.name + ')':38} {'(all games)':34} {time.perf_counter() - start:8.3f} "
              f"{0:8d} {sum(len(g.questions) for g in result.games):9d}")
        for game in result.games:
            with CaptureQueriesContext(connection) as ctx:
                start = time.perf_counter()
                built = build_game(game, replace=True)
                elapsed = time.perf_counter() - start
            print(f"{'build ' + fmt + ' (' + path.name + ')':38} {game.slug[:34]:34} {elapsed:8.3f} "
                  f"{len(ctx.captured_queries):8d} {len(game.questions):9d}  [{built.status}]")

    out_root = Path(tempfile.mkdtemp(prefix="casebook-bench-out-"))
    for game in Game.objects.order_by("language", "source_id"):
        for fmt in EXPORT_FORMATS:
            best, queries, n = float("inf"), 0, 0
            for i in range(args.repeat):
                with CaptureQueriesContext(connection) as ctx:
                    start = time.perf_counter()
                    try:
                        summary = export_games(fmt, out_root / f"{fmt}-{game.pk}-{i}", slugs=[game.slug], force=True)
                    except ValueError:
                        break
                    best = min(best, time.perf_counter() - start)
                queries, n = len(ctx.captured_queries), summary.questions
            if best != float("inf"):
                print(f"{'export ' + fmt:38} {game.source_id[:34]:34} {best:8.3f} {queries:8d} {n:9d}")
        # A Casebook export read back: checked (checksums, schema), then rebuilt in place (--replace).
        folder = out_root / f"casebook-{game.pk}-0"
        with CaptureQueriesContext(connection) as ctx:
            start = time.perf_counter()
            imported = import_dataset("casebook", folder, replace=True)
            elapsed = time.perf_counter() - start
        print(f"{'import casebook --replace':38} {game.source_id[:34]:34} {elapsed:8.3f} {len(ctx.captured_queries):8d} "
              f"{sum(g.questions for g in imported.games):9d}  [{', '.join(g.status for g in imported.games)}]")


if __name__ == "__main__":
    main()
