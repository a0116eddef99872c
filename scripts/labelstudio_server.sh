#!/usr/bin/env bash
# A local, offline Label Studio server for the Label Studio bridge (tests, .ci/run, demos).
#
#   bash scripts/labelstudio_server.sh [start|stop|status|install|env]
#
# label-studio 1.23.2 pins Django/openai versions that clash with ours, so it lives in its own
# virtualenv (.venv-labelstudio, created once; the install takes ~90 s and ~1 GB). `start` is
# idempotent: it reuses a server already answering /health on the port. The admin user gets a
# known legacy API token (LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN must be true at the *first* start,
# or the token is refused with 401). On success `start` prints two lines for `eval`:
#   CASEBOOK_LABELSTUDIO_URL=http://127.0.0.1:PORT
#   CASEBOOK_LABELSTUDIO_TOKEN=...
# Settings (environment): CASEBOOK_LABELSTUDIO_PORT (8089), CASEBOOK_LABELSTUDIO_TOKEN,
# CASEBOOK_LABELSTUDIO_DATA (var/label-studio), CASEBOOK_LABELSTUDIO_VENV (.venv-labelstudio),
# PYTHON (python3). Progress and errors go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=1.23.2
PORT="${CASEBOOK_LABELSTUDIO_PORT:-8089}"
TOKEN="${CASEBOOK_LABELSTUDIO_TOKEN:-c0ffee5ca5eb00c0ffee5ca5eb00c0ffee5ca5eb}"
DATA="${CASEBOOK_LABELSTUDIO_DATA:-$PWD/var/label-studio}"
VENV="${CASEBOOK_LABELSTUDIO_VENV:-$PWD/.venv-labelstudio}"
PY="${PYTHON:-python3}"
URL="http://127.0.0.1:$PORT"
PIDFILE="$DATA/server.pid"
LOG="$DATA/server.log"
STAMP="$VENV/.casebook-label-studio-$VERSION"

say() { printf 'labelstudio_server: %s\n' "$*" >&2; }
# HTTP status of a GET (000 when nothing answers); python3 rather than curl, which a bare Debian lacks.
http_status() {
  "$PY" - "$@" <<'PYEOF'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], headers={"Authorization": f"Token {sys.argv[2]}"} if len(sys.argv) > 2 else {})
try:
    print(urllib.request.urlopen(req, timeout=5).status)
except urllib.error.HTTPError as exc:
    print(exc.code)
except Exception:
    print("000")
PYEOF
}
healthy() { [ "$(http_status "$URL/health")" = 200 ]; }

install() {
  if [ -f "$STAMP" ] && [ -x "$VENV/bin/label-studio" ]; then return 0; fi
  say "installing label-studio==$VERSION into $VENV (~90 s, ~1 GB)"
  if [ ! -x "$VENV/bin/python" ]; then "$PY" -m venv "$VENV"; fi
  # Keep ruff, git and pytest out of the virtualenv (they honour nested .gitignore files).
  printf '*\n' > "$VENV/.gitignore"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | sed "/^WARNING: Location/d"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "label-studio==$VERSION" 2>&1 | sed "/^WARNING: Location/d"
  touch "$STAMP"
}

start() {
  if healthy; then
    say "reusing the server already answering on $URL"
  else
    install
    mkdir -p "$DATA"
    say "starting Label Studio on $URL (data in $DATA, log in $LOG)"
    # A clean environment (a caller such as pytest exports DJANGO_SETTINGS_MODULE=casebook.settings,
    # DATABASE_URL, ...), offline: no version check, no analytics, no sentry.
    env -i PATH="/usr/local/bin:/usr/bin:/bin" HOME="${HOME:-/root}" LANG=C.UTF-8 LC_ALL=C.UTF-8 \
      LABEL_STUDIO_BASE_DATA_DIR="$DATA" LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true \
      LATEST_VERSION_CHECK=false COLLECT_ANALYTICS=false SENTRY_DSN= FRONTEND_SENTRY_DSN= \
      LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK=true \
      nohup "$VENV/bin/label-studio" start --no-browser --internal-host 127.0.0.1 -p "$PORT" \
        --data-dir "$DATA" --username admin@example.com --password casebook-admin-pass \
        --user-token "$TOKEN" >>"$LOG" 2>&1 </dev/null &
    echo $! > "$PIDFILE"
    for _ in $(seq 180); do
      if healthy; then break; fi
      if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
        say "the server exited during start-up; last lines of $LOG:"; tail -n 20 "$LOG" >&2; exit 1
      fi
      sleep 1
    done
    if ! healthy; then say "no answer from $URL/health after 180 s; see $LOG"; exit 1; fi
  fi
  # The token is fixed at the first start of a data dir: check it really works.
  code=$(http_status "$URL/api/projects/?page_size=1" "$TOKEN")
  if [ "$code" != 200 ]; then
    say "the server on $URL refuses the token (HTTP $code); it was started with another token or data dir"
    exit 1
  fi
  echo "CASEBOOK_LABELSTUDIO_URL=$URL"
  echo "CASEBOOK_LABELSTUDIO_TOKEN=$TOKEN"
}

stop() {
  if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    pid=$(cat "$PIDFILE")
    # label-studio runs as one process (Django runserver/uwsgi child processes share its group).
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
    say "stopped (pid $pid)"
  else
    say "not running (no live pid in $PIDFILE)"
  fi
  rm -f "$PIDFILE"
}

case "${1:-start}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) if healthy; then say "up on $URL"; else say "down on $URL"; exit 1; fi ;;
  env) echo "CASEBOOK_LABELSTUDIO_URL=$URL"; echo "CASEBOOK_LABELSTUDIO_TOKEN=$TOKEN" ;;
  *) say "usage: $0 [start|stop|status|install|env]"; exit 2 ;;
esac
