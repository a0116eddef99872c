"""Settings come from the environment: each ``manage.py`` run below is a fresh process, as in
production, so what is checked is what a deployment gets (data dir, database, secret key, DEBUG)."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
CLEARED = ("CASEBOOK_DATA_DIR", "DATABASE_URL", "DJANGO_DEBUG", "DJANGO_SECRET_KEY", "DJANGO_SETTINGS_MODULE")
PROBE = """
import hashlib, json
from django.conf import settings
from django.db import connection
connection.ensure_connection()  # SQLite creates its file here
db = settings.DATABASES["default"]
print(json.dumps({
    "data_dir": str(settings.DATA_DIR),
    "engine": db["ENGINE"],
    "name": str(db["NAME"]),
    "key": hashlib.sha256(settings.SECRET_KEY.encode()).hexdigest(),
    "debug": settings.DEBUG,
    "media_root": str(settings.MEDIA_ROOT),
}))
"""


def probe(**env: str) -> dict:
    """Run ``manage.py shell`` in a clean environment plus ``env``; return what settings said."""
    clean = {k: v for k, v in os.environ.items() if k not in CLEARED}
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", PROBE],
        cwd=PROJECT, env={**clean, **env}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_two_data_dirs_give_two_sqlite_files_and_keys(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    first, second = probe(CASEBOOK_DATA_DIR=str(a)), probe(CASEBOOK_DATA_DIR=str(b))
    assert first["data_dir"] == str(a) and second["data_dir"] == str(b)
    assert first["engine"] == second["engine"] == "django.db.backends.sqlite3"
    assert (a / "casebook.sqlite3").is_file() and (b / "casebook.sqlite3").is_file()
    assert first["name"] == str(a / "casebook.sqlite3")
    assert first["media_root"] == str(a / "media")
    assert first["key"] != second["key"]  # each data dir has its own generated key


def test_secret_key_is_generated_once_and_reused(tmp_path):
    first = probe(CASEBOOK_DATA_DIR=str(tmp_path))
    key_file = tmp_path / "secret_key"
    assert key_file.is_file() and len(key_file.read_text().strip()) >= 50
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert probe(CASEBOOK_DATA_DIR=str(tmp_path))["key"] == first["key"]
    given = probe(CASEBOOK_DATA_DIR=str(tmp_path), DJANGO_SECRET_KEY="from-the-environment")
    assert given["key"] != first["key"]


def test_debug_is_off_unless_asked(tmp_path):
    assert probe(CASEBOOK_DATA_DIR=str(tmp_path))["debug"] is False
    assert probe(CASEBOOK_DATA_DIR=str(tmp_path), DJANGO_DEBUG="1")["debug"] is True


def test_database_url_wins_over_the_data_dir(tmp_path):
    elsewhere = tmp_path / "elsewhere" / "other.sqlite3"
    elsewhere.parent.mkdir()
    got = probe(CASEBOOK_DATA_DIR=str(tmp_path / "data"), DATABASE_URL=f"sqlite:///{elsewhere}")
    assert got["name"] == str(elsewhere) and elsewhere.is_file()
    assert not (tmp_path / "data" / "casebook.sqlite3").exists()
