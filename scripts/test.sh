#!/usr/bin/env bash
# Set up everything the tests need (apt packages incl. chromium and postgresql, venv, pip,
# migrations), then run `ruff check .` and the whole pytest suite. Extra arguments go to pytest.
#
# Honours DATABASE_URL (e.g. postgres://user:pass@127.0.0.1:5432/db; pytest-django creates
# test_<db>, so the role needs CREATEDB) and CASEBOOK_DATA_DIR (default ./var/test, so tests never
# touch the demo database in ./var).
set -euo pipefail
cd "$(dirname "$0")/.."

export CASEBOOK_DATA_DIR="${CASEBOOK_DATA_DIR:-$PWD/var/test}"
export OMP_THREAD_LIMIT="${OMP_THREAD_LIMIT:-1}"   # tesseract is ~5x slower with OpenMP threads here
export PYTHONDONTWRITEBYTECODE=1

CASEBOOK_BROWSER=1 CASEBOOK_POSTGRES=1 bash scripts/setup.sh

db="${DATABASE_URL:-sqlite in $CASEBOOK_DATA_DIR}"
echo "casebook test: database $(printf '%s' "$db" | sed -E 's#//[^@/]*@#//***@#')"

ruff_rc=0
.venv/bin/ruff check . || ruff_rc=$?

pytest_rc=0
.venv/bin/python -m pytest "$@" || pytest_rc=$?

if [ "$pytest_rc" -eq 5 ]; then
  echo "casebook test: FAILED: pytest collected no tests (arguments: ${*:-none})" >&2
fi
if [ "$ruff_rc" -ne 0 ]; then
  echo "casebook test: FAILED: ruff check reported problems (status $ruff_rc)" >&2
fi
if [ "$pytest_rc" -ne 0 ] && [ "$pytest_rc" -ne 5 ]; then
  echo "casebook test: FAILED: pytest exited with status $pytest_rc" >&2
fi
if [ "$ruff_rc" -ne 0 ] || [ "$pytest_rc" -ne 0 ]; then exit 1; fi
echo "casebook test: ruff and pytest passed"
