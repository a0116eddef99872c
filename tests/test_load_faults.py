"""The load script's core for 5 s, as it runs (gunicorn on loopback, 4 writing clients): no 5xx, no lost writes.

On SQLite the script works in its own scratch data dir; on PostgreSQL it is pointed at the test database.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.django_db(transaction=True)
def test_mixed_write_workload_loses_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CASEBOOK_DATA_DIR"}}
    env["CASEBOOK_DATA_DIR"] = str(tmp_path)
    if connection.vendor == "postgresql":
        s = connection.settings_dict
        env["DATABASE_URL"] = f"postgres://{s['USER']}:{s['PASSWORD']}@{s['HOST']}:{s['PORT']}/{s['NAME']}"
    out = subprocess.run([sys.executable, "benchmarks/load_faults.py", "--clients", "4", "--seconds", "5",
                          "--drills", "none", "--port", "0"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    figures = out.stdout
    requests = int(re.search(r"requests (\d+)", figures).group(1))
    acknowledged = int(re.search(r"writes acknowledged (\d+)", figures).group(1))
    assert requests > 20 and acknowledged > 10, figures
    assert "responses >= 500: 0," in figures and "lost 0;" in figures and "refused with a form error: 0" in figures, figures
    for op in ("question edit", "submit", "withdraw", "relationship edit", "chain node", "span create"):
        assert re.search(rf"^\s+{op}\s+n=\s*[1-9]", figures, re.M), (op, figures)
