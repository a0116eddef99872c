"""p50/p95 latency of the workspace, script reader and question list under 20 concurrent clients.

Builds a game with 2,000 questions and 50,000-character role scripts in a scratch data dir, serves
it with gunicorn on 127.0.0.1 and hammers the three pages from N concurrent keep-alive clients.

    .venv/bin/python benchmarks/web_latency.py                      # SQLite in a temp dir
    DATABASE_URL=postgres://mm:mm@127.0.0.1:54329/mmdb .venv/bin/python benchmarks/web_latency.py
    options: --clients 20 --requests 30 (per client and page) --workers 3 --questions 2000 --chars 50000

Target: p95 < 100 ms for each page.
"""
from __future__ import annotations

import argparse
import http.client
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from latency import p50_p95, wait_ready  # benchmarks/latency.py, beside this script

ROOT = Path(__file__).resolve().parent.parent


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--requests", type=int, default=30, help="requests per client and page")
    p.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    p.add_argument("--threads", type=int, default=2, help="gunicorn threads per worker")
    p.add_argument("--questions", type=int, default=2000)
    p.add_argument("--chars", type=int, default=50_000, help="characters per role script")
    p.add_argument("--characters", type=int, default=8)
    p.add_argument("--think", type=float, default=0.0,
                   help="seconds each client pauses between requests (0 = back-to-back, a saturation test; "
                        "~1 s is closer to annotators clicking)")
    return p.parse_args()


def build(args: argparse.Namespace) -> tuple[str, dict[str, str]]:
    """Migrate, build the big game, return the session cookie and the URLs to fetch."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from annotate.models import Character, EvidenceSpan, Game, Membership, Option, Question

    call_command("migrate", verbosity=0)
    Game.objects.filter(slug="latency-bench").delete()
    game = Game.objects.create(slug="latency-bench", title="性能测试 latency bench", language="zh",
                               truth_text="真相" * 5000, public_clue_text="公开线索" * 1000)
    line = "那天晚上十点，我看见管家拿着一把钥匙走进书房，𠮷田在花园里等他。\n"
    script = (line * (args.chars // len(line) + 1))[: args.chars]
    Character.objects.bulk_create([Character(game=game, name=f"角色{i}", position=i, script=script) for i in range(args.characters)])
    chars = list(game.characters.all())
    kinds = ["objective", "reasoning", "relations", "long_script", "text_image", "multi_step"]
    Question.objects.bulk_create([
        Question(game=game, kind=kinds[i % len(kinds)], stem=f"第{i}题：谁在十点进了书房？", answer="a", position=i,
                 perspective=chars[i % len(chars)], status="approved") for i in range(args.questions)
    ], batch_size=1000)
    Option.objects.bulk_create([Option(question=q, position=j, text=f"选项{j}", is_correct=j == 0)
                                for q in game.questions.all() for j in range(4)], batch_size=5000)
    EvidenceSpan.objects.bulk_create([EvidenceSpan(game=game, document="script", character=chars[0], start=i * 500,
                                                   end=i * 500 + 10, quote=script[i * 500:i * 500 + 10]) for i in range(60)])
    User = get_user_model()
    user = User.objects.filter(username="bench").first() or User.objects.create_user("bench", password="bench-pass-123")
    Membership.objects.get_or_create(user=user, game=game, defaults={"role": "manager"})
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"].value
    urls = {
        "workspace": "/g/latency-bench/",
        "reader (2×50k)": f"/g/latency-bench/read/?left=c{chars[0].pk}&right=c{chars[1].pk}",
        "question list": "/g/latency-bench/questions/",
    }
    return cookie, urls


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



def run_client(port: int, cookie: str, url: str, n: int, out: list[float], errors: list[str], lock: threading.Lock,
               think: float = 0.0) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Cookie": f"sessionid={cookie}", "Connection": "keep-alive"}
    rng = random.Random()
    for _ in range(n):
        if think:
            time.sleep(rng.uniform(0.5, 1.5) * think)
        start = time.perf_counter()
        try:
            conn.request("GET", url, headers=headers)
            response = conn.getresponse()
            body = response.read()
            if response.status != 200 or not body:
                errors.append(f"{url}: HTTP {response.status}")
        except (OSError, http.client.HTTPException) as exc:
            errors.append(f"{url}: {exc}")
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            continue
        elapsed = (time.perf_counter() - start) * 1000
        with lock:
            out.append(elapsed)
    conn.close()



def main() -> None:
    args = parse_args()
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    scratch = tempfile.mkdtemp(prefix="casebook-weblatency-")
    os.environ.setdefault("CASEBOOK_DATA_DIR", scratch)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casebook.settings")
    os.environ["DJANGO_DEBUG"] = "0"
    (Path(os.environ["CASEBOOK_DATA_DIR"]) / "static").mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    cookie, urls = build(args)
    from django.db import connection

    backend = connection.vendor
    print(f"built the game in {time.perf_counter() - t0:.1f} s ({backend}, {args.questions} questions, "
          f"{args.characters} scripts × {args.chars} characters)")
    port = free_port()
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "casebook.wsgi", "-b", f"127.0.0.1:{port}", "-w", str(args.workers),
         "--threads", str(args.threads), "--log-level", "warning"],
        cwd=ROOT, env=os.environ.copy(),
    )
    try:
        wait_ready(port)
        lock = threading.Lock()
        for url in urls.values():  # warm every worker
            for _ in range(args.workers * 2):
                run_client(port, cookie, url, 1, [], [], lock)
        load = os.getloadavg()[0]
        print(f"{args.clients} concurrent clients, {args.requests} requests each per page, think time {args.think} s, "
              f"gunicorn {args.workers} workers × {args.threads} threads on {os.cpu_count()} cores "
              f"(load average before: {load:.1f})")
        print(f"{'page':18} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'req/s':>7}  size")
        for name, url in urls.items():
            times: list[float] = []
            errors: list[str] = []
            started = time.perf_counter()
            with ThreadPoolExecutor(args.clients) as pool:
                for _ in range(args.clients):
                    pool.submit(run_client, port, cookie, url, args.requests, times, errors, lock, args.think)
            wall = time.perf_counter() - started
            conn = http.client.HTTPConnection("127.0.0.1", port)
            conn.request("GET", url, headers={"Cookie": f"sessionid={cookie}"})
            size = len(conn.getresponse().read())
            p50, p95 = p50_p95(times)
            verdict = "ok" if p95 < 100 else "over target"
            print(f"{name:18} {p50:8.1f} {p95:8.1f} {max(times):8.1f} "
                  f"{len(times) / wall:7.0f}  {size / 1024:.0f} KiB  {verdict}")
            for e in errors[:5]:
                print("  error:", e)
    finally:
        server.terminate()
        server.wait(10)
        if os.environ["CASEBOOK_DATA_DIR"] == scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
