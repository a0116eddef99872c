"""Throughput of the evaluation client against a local endpoint with a fixed 200 ms latency.

Target (issue 7): at concurrency c, at least 0.8 × c / latency requests per second — i.e. the
client adds little beyond the endpoint's own latency. Run:

    .venv/bin/python benchmarks/eval_throughput.py [--latency 0.2] [--batches 10]

Prints one line per concurrency (1, 8, 32): requests, seconds, requests/s, target, ratio.
No cache is used (every request goes over HTTP to 127.0.0.1). The server runs in its own process
(``python -m casebook.openai_test_server``) so that it does not share the client's GIL.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from casebook.llm import ChatClient, ChatRequest  # noqa: E402


def measure(base_url: str, concurrency: int, batches: int) -> tuple[int, float, float]:
    n = concurrency * batches
    requests = [ChatRequest("bench", [{"role": "user", "content": f"问题 {i}：谁是凶手？"}], {"temperature": 0})
                for i in range(n)]
    client = ChatClient(base_url=base_url, api_key="bench", cache=None, concurrency=concurrency,
                        progress=False, max_retries=0)
    client.run_sync(requests[:concurrency])  # warm-up: imports, first connections
    started, cpu = time.perf_counter(), time.process_time()
    results = client.run_sync(requests)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    failed = [r.error for r in results if r.content is None]
    assert not failed, f"{len(failed)} requests failed, e.g. {failed[0]}"
    return n, elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--batches", type=int, default=10, help="requests per run = concurrency × batches")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    args = parser.parse_args()
    print(f"latency {args.latency * 1000:.0f} ms; target = 0.8 × concurrency / latency")
    print(f"{'conc':>5} {'requests':>9} {'seconds':>8} {'req/s':>8} {'target':>8} {'ratio':>6} {'client CPU ms/req':>18}")
    server = subprocess.Popen([sys.executable, "-m", "casebook.openai_test_server", "--latency", str(args.latency)],
                              stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent)
    try:
        base_url = server.stdout.readline().strip()
        worst = float("inf")
        for c in args.concurrency:
            n, elapsed, cpu = measure(base_url, c, args.batches)
            rate = n / elapsed
            target = 0.8 * c / args.latency
            worst = min(worst, rate / target)
            print(f"{c:>5} {n:>9} {elapsed:>8.2f} {rate:>8.1f} {target:>8.1f} {rate / target:>6.2f} {1000 * cpu / n:>18.1f}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"worst ratio to target: {worst:.2f} ({'meets' if worst >= 1 else 'below'} the target); "
          f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
