"""Start-up time of `manage.py check` and `manage.py help` against a bare Django project.

Prints the best of N runs of each, and the ratio (the goal is at most 3x a bare project).
    .venv/bin/python benchmarks/startup.py [--runs 5]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent


def best(cmd: list[str], cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "django", "startproject", "bare", tmp], check=True)
        bare = best([sys.executable, "manage.py", "check"], Path(tmp), args.runs)
    rows = [("bare Django: manage.py check", bare)]
    for command in (["check"], ["help"]):
        rows.append((f"casebook: manage.py {' '.join(command)}", best([sys.executable, "manage.py", *command], PROJECT, args.runs)))
    for label, seconds in rows:
        print(f"{label:<36} {seconds:6.3f} s   {seconds / bare:4.2f}x bare")
    return 0


if __name__ == "__main__":
    sys.exit(main())
