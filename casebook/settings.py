"""Casebook settings: everything that differs between machines comes from the environment.

- ``CASEBOOK_DATA_DIR`` (default ``./var``): SQLite file, media (uploads, images), secret key.
- ``DATABASE_URL`` (default ``sqlite:///<data dir>/casebook.sqlite3``), e.g.
  ``postgres://user:pass@127.0.0.1:5432/casebook``.
- ``DJANGO_DEBUG`` (off unless ``1``/``true``), ``DJANGO_SECRET_KEY`` (generated and kept in the
  data dir on first run when absent), ``DJANGO_ALLOWED_HOSTS`` (comma-separated).
- ``CASEBOOK_HTTPS`` (``1`` behind a TLS proxy that sets ``X-Forwarded-Proto``): secure cookies,
  HTTPS redirect, HSTS for ``CASEBOOK_HSTS_SECONDS`` (default one year).
- ``CASEBOOK_LOGIN_ATTEMPTS`` / ``CASEBOOK_LOGIN_LOCKOUT_SECONDS``: failed logins allowed per
  username and address before a lockout (default 10 per 15 minutes).
- ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``CASEBOOK_LLM_MODEL``: the LLM endpoint (optional;
  every feature has an offline path).
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DATA_DIR = Path(os.environ.get("CASEBOOK_DATA_DIR", BASE_DIR / "var")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    """Use DJANGO_SECRET_KEY, else a key generated once and kept in the data dir."""
    given = os.environ.get("DJANGO_SECRET_KEY")
    if given:
        return given
    key_file = DATA_DIR / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    key = secrets.token_urlsafe(50)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key


SECRET_KEY = _secret_key()
DEBUG = env_flag("DJANGO_DEBUG")
ALLOWED_HOSTS = [h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_tasks",
    "django_tasks_db",
    "casebook",
    "annotate",
    "ingest",
    "exporters",
    "evaluation",
    "generation",
    "review",
    "synthesis",
    "playlogs",
    "labelstudio",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "casebook.security.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "casebook.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "exporters.context.import_link",
            ],
        },
    },
]

WSGI_APPLICATION = "casebook.wsgi.application"
ASGI_APPLICATION = "casebook.asgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{DATA_DIR / 'casebook.sqlite3'}"),
        conn_max_age=int(os.environ.get("CASEBOOK_DB_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A team on one machine: WAL lets readers work while a writer commits; IMMEDIATE takes the write
    # lock when a transaction starts, so a transaction that reads before it writes waits for the
    # lock (busy timeout) instead of failing at once with "database is locked" (the deferred default).
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].update({
        "timeout": float(os.environ.get("CASEBOOK_SQLITE_TIMEOUT", "45")),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    })

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The model the core's jobs and audit entries point at; a string reference (like AUTH_USER_MODEL)
# so that casebook/ never imports the domain app that defines it.
CASEBOOK_GAME_MODEL = "annotate.Game"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Login throttling (casebook.security.ThrottledLoginView), counted in Django's cache.
CASEBOOK_LOGIN_ATTEMPTS = int(os.environ.get("CASEBOOK_LOGIN_ATTEMPTS", "10"))
CASEBOOK_LOGIN_LOCKOUT_SECONDS = int(os.environ.get("CASEBOOK_LOGIN_LOCKOUT_SECONDS", "900"))

# HTTPS: Casebook runs behind a TLS-terminating proxy; CASEBOOK_HTTPS=1 turns on everything
# `manage.py check --deploy` asks for. The proxy must set X-Forwarded-Proto (and strip it from clients).
if env_flag("CASEBOOK_HTTPS"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("CASEBOOK_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_flag("CASEBOOK_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_flag("CASEBOOK_HSTS_PRELOAD", True)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise warns on every request when it is missing
MEDIA_URL = "media/"
MEDIA_ROOT = DATA_DIR / "media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

# Uploads: big game packages stream to disk rather than memory.
DATA_UPLOAD_MAX_MEMORY_SIZE = 20 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
CASEBOOK_MAX_UPLOAD_BYTES = int(os.environ.get("CASEBOOK_MAX_UPLOAD_BYTES", str(500 * 1024 * 1024)))
CASEBOOK_MAX_IMPORT_BYTES = int(os.environ.get("CASEBOOK_MAX_IMPORT_BYTES", str(200 * 1024 * 1024)))
CASEBOOK_MAX_IMAGE_PIXELS = int(os.environ.get("CASEBOOK_MAX_IMAGE_PIXELS", str(120_000_000)))

# Background jobs (OCR, LLM batches, Label Studio sync) run on a DB-backed queue with a worker
# process (`python manage.py worker`, which keeps db_worker alive); tests switch to the immediate backend.
TASKS = {
    "default": {
        "BACKEND": os.environ.get("CASEBOOK_TASK_BACKEND", "django_tasks_db.DatabaseBackend"),
    }
}

# LLM endpoint (any OpenAI-compatible server). Without a key, features use offline heuristics.
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")
CASEBOOK_LLM_MODEL = os.environ.get("CASEBOOK_LLM_MODEL", "gpt-4o-mini")
CASEBOOK_LLM_TIMEOUT = float(os.environ.get("CASEBOOK_LLM_TIMEOUT", "60"))
CASEBOOK_LLM_ATTEMPTS = int(os.environ.get("CASEBOOK_LLM_ATTEMPTS", "4"))
CASEBOOK_LLM_CONCURRENCY = int(os.environ.get("CASEBOOK_LLM_CONCURRENCY", "4"))
CASEBOOK_LLM_MAX_TOKENS = int(os.environ.get("CASEBOOK_LLM_MAX_TOKENS", "1024"))
CASEBOOK_LLM_RESPONSE_FORMAT = os.environ.get("CASEBOOK_LLM_RESPONSE_FORMAT", "json_schema")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("CASEBOOK_LOG_LEVEL", "WARNING")},
}
