"""Distractor batches and quality checks on the real Sin anchor, in a throwaway SQLite database.

Prints, per line: what was measured, the count, seconds, and the rate.
- LLM distractor jobs against the local OpenAI-compatible server with a fixed latency (default 200 ms),
  at concurrency 1 / 4 / 8: with bounded concurrency the job should approach concurrency / latency
  questions per second (target ≥ 0.7 × that), since options are written as each answer arrives.
- Offline distractor jobs (no endpoint): questions per second.
- ``check_game`` (all per-question and per-set checks) on the imported Sin anchor.

    .venv/bin/python benchmarks/generation_batch.py [--latency 0.2] [--questions 40]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["CASEBOOK_DATA_DIR"] = tempfile.mkdtemp(prefix="casebook-bench-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casebook.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from annotate.models import Game, Option, Question  # noqa: E402
from casebook.openai_test_server import OpenAITestServer  # noqa: E402
from generation.jobs import create_distractor_job, run_distractor_job  # noqa: E402
from generation.quality import check_game  # noqa: E402

ANCHOR = Path(os.environ.get("CASEBOOK_ANCHORS", ROOT.parent / "shared" / "anchors")) / "wellplay"
SIN = ANCHOR / "legacy-195be0c" / "chinese" / "131-罪恶（4人封闭）"


def bare_questions(game: Game, count: int) -> list[int]:
    sources = list(game.questions.filter(kind__in=["objective", "reasoning"]).prefetch_related("options"))
    ids = []
    for i in range(count):
        src = sources[i % len(sources)]
        q = Question.objects.create(game=game, kind=src.kind, sub_type=src.sub_type, stem=src.stem,
                                    position=10_000 + i, perspective=src.perspective)
        Option.objects.create(question=q, text=next(o.text for o in src.options.all() if o.is_correct), is_correct=True)
        ids.append(q.pk)
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--questions", type=int, default=40)
    args = parser.parse_args()
    if not SIN.is_dir():
        sys.exit(f"anchor not found: {SIN} (set CASEBOOK_ANCHORS)")
    call_command("migrate", verbosity=0)
    call_command("import_dataset", str(SIN), format="wellplay", verbosity=0, quiet_report=True)
    game = Game.objects.get()

    def reply(_request, n):
        return json.dumps({"distractors": [f"候选{n}甲", f"候选{n}乙", f"候选{n}丙"]}, ensure_ascii=False)

    print(f"{'measure':38} {'n':>4} {'seconds':>8} {'per s':>7} {'target':>7}")
    with OpenAITestServer(responder=reply, latency=args.latency) as server:
        settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL = "bench", server.base_url
        for concurrency in (1, 4, 8):
            ids = bare_questions(game, args.questions)
            job = create_distractor_job(game, ids, n=3, mode="llm", concurrency=concurrency)
            start = time.perf_counter()
            result = run_distractor_job(job.pk)
            seconds = time.perf_counter() - start
            assert len(result["written"]) == len(ids), result["failures"][:3]
            target = 0.7 * concurrency / args.latency
            print(f"{f'llm job, concurrency {concurrency}':38} {len(ids):4d} {seconds:8.2f} {len(ids) / seconds:7.1f} "
                  f"{target:7.1f}  max in flight {server.max_in_flight}")
            server.reset_counters()
    ids = bare_questions(game, args.questions)
    job = create_distractor_job(game, ids, n=3, mode="offline")
    start = time.perf_counter()
    run_distractor_job(job.pk)
    seconds = time.perf_counter() - start
    print(f"{'offline job':38} {len(ids):4d} {seconds:8.2f} {len(ids) / seconds:7.1f}")
    start = time.perf_counter()
    report = check_game(game)
    seconds = time.perf_counter() - start
    print(f"{'check_game (all checks)':38} {report.items:4d} {seconds:8.2f} {report.items / seconds:7.1f}")


if __name__ == "__main__":
    main()
