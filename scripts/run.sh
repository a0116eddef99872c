#!/usr/bin/env bash
# Casebook in one command: set up (apt, venv, pip, migrations, static files), load the demo game,
# create the demo admin and print its login, then serve the web app on 127.0.0.1:8000 (gunicorn,
# SQLite by default) together with the background worker for long jobs (restarted if it dies).
# Ctrl-C stops both.
#
# Environment: CASEBOOK_DATA_DIR (default ./var), DATABASE_URL, CASEBOOK_DEMO_PASSWORD,
# CASEBOOK_HOST / CASEBOOK_PORT (default 127.0.0.1 / 8000), CASEBOOK_THREADS (default 4),
# CASEBOOK_WORKERS (background worker processes, default: one per core).
set -euo pipefail
cd "$(dirname "$0")/.."

export CASEBOOK_DATA_DIR="${CASEBOOK_DATA_DIR:-$PWD/var}"
HOST="${CASEBOOK_HOST:-127.0.0.1}"
PORT="${CASEBOOK_PORT:-8000}"
PY=.venv/bin/python

# Installed first so that Ctrl-C during set-up also stops cleanly (the trap runs after the
# interrupted child exits).
SERVER_PID=""
WORKER_PID=""
cleanup() {
  trap - EXIT INT TERM
  local pids="$SERVER_PID $WORKER_PID" pid alive
  if [ -z "${pids// /}" ]; then return; fi
  echo "casebook: stopping the web server and the worker"
  for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 40); do   # up to 8 s for a graceful stop, then force
    alive=""
    for pid in $pids; do if kill -0 "$pid" 2>/dev/null; then alive=1; fi; done
    if [ -z "$alive" ]; then break; fi
    sleep 0.2
  done
  for pid in $pids; do
    if kill -0 "$pid" 2>/dev/null; then
      echo "casebook: forcing pid $pid (and its children) to stop" >&2
      for child in $(ps -o pid= --ppid "$pid" 2>/dev/null); do kill -KILL "$child" 2>/dev/null || true; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

CASEBOOK_BROWSER="${CASEBOOK_BROWSER:-0}" bash scripts/setup.sh   # the server needs no chromium
"$PY" manage.py collectstatic --noinput -v 0
"$PY" manage.py load_demo --url "http://$HOST:$PORT/"

if ! "$PY" -c "import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); \
s.bind(('$HOST', $PORT))" 2>/dev/null; then
  echo "casebook: $HOST:$PORT is already in use; stop the other server or choose another CASEBOOK_PORT" >&2
  exit 1
fi

# The worker (manage.py worker: db_worker that outlives database errors) runs under a small
# supervisor that restarts it, and says so, whenever it dies; the web server keeps serving meanwhile.
supervise_worker() {
  local child="" rc
  trap 'if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null; wait "$child" 2>/dev/null; fi; exit 0' TERM INT
  while true; do
    "$PY" manage.py worker --queue-name '*' --interval 2 &
    child=$!
    set +e; wait "$child"; rc=$?; set -e
    echo "casebook: the background worker (pid $child) exited (status $rc); restarting it in 2 s" >&2
    sleep 2
  done
}
# One worker per core by default: an ingest's OCR is shared out as page batches, one batch per
# worker process at a time, so the workers together use every core (CASEBOOK_WORKERS to change).
WORKERS="${CASEBOOK_WORKERS:-$(nproc 2>/dev/null || echo 1)}"
for _ in $(seq "$WORKERS"); do
  supervise_worker &
  WORKER_PID="$WORKER_PID $!"
done
.venv/bin/gunicorn casebook.wsgi \
  --bind "$HOST:$PORT" --workers 1 --threads "${CASEBOOK_THREADS:-4}" \
  --timeout 120 --graceful-timeout 5 --no-control-socket --access-logfile - &
SERVER_PID=$!
echo "casebook: serving http://$HOST:$PORT/ (web pid $SERVER_PID, $WORKERS worker(s), supervisor pid(s)$WORKER_PID); Ctrl-C to stop"

# The worker is restarted by its supervisor; when the web server ends, everything stops (the trap).
set +e
wait "$SERVER_PID"
rc=$?
set -e
echo "casebook: the web server exited (status $rc)" >&2
exit "$rc"
