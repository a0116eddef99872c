"""Shared by the web benchmarks (web_latency.py, load_faults.py): percentiles of request times and
waiting until a freshly started server answers, so both report latency the same way."""
from __future__ import annotations

import http.client
import time


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``; 0 for no values."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else 0.0


def p50_p95(values: list[float]) -> tuple[float, float]:
    return pct(values, 0.5), pct(values, 0.95)


def wait_ready(port: int, timeout: float = 30) -> None:
    """Block until the login page on ``port`` answers 200 (exit with a message after ``timeout`` s)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/accounts/login/")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"the server on port {port} did not start")
