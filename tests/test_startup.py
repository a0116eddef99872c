"""Commands start fast: heavy SDKs are imported at first use, never by django.setup() or the URL conf."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
HEAVY = ("openai", "label_studio_sdk", "pandas", "matplotlib", "numpy", "pyarrow", "datasets", "jsonschema")

PROBE = f"""
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casebook.settings")
import django
django.setup()
from django.urls import get_resolver
get_resolver().url_patterns
from django.core.management import get_commands, load_command_class
for name, app in get_commands().items():
    load_command_class(app, name)
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""


def test_setup_urls_and_commands_import_no_heavy_sdk():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_lazy_sdk_still_loads_on_first_use():
    probe = PROBE.replace("print(json.dumps", "import casebook.llm as llm\nllm.openai.OpenAI\nprint(json.dumps")
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "openai" in json.loads(done.stdout.strip().splitlines()[-1])
