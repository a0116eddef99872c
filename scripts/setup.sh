#!/usr/bin/env bash
# One idempotent set-up for a fresh Debian 12 machine (run as root): system packages, the
# virtualenv, Python packages, migrations. Used by scripts/run.sh, scripts/test.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

APT_PACKAGES=(tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim tesseract-ocr-chi-tra
              fonts-wqy-zenhei poppler-utils
              python3 python3-venv procps)  # a bare Debian 12 has no python3/venv; run.sh uses ps
if [ "${CASEBOOK_BROWSER:-1}" = "1" ]; then APT_PACKAGES+=(chromium); fi
if [ "${CASEBOOK_POSTGRES:-0}" = "1" ]; then APT_PACKAGES+=(postgresql); fi

missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "casebook setup: installing ${missing[*]}"
  if [ "$(id -u)" != 0 ]; then echo "casebook setup: run as root to install system packages" >&2; exit 1; fi
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then "$PY" -m venv .venv; fi
stamp=.venv/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  # (sed drops pip's notes about index folders some machines configure but do not have)
  .venv/bin/python -m pip install -q --upgrade pip 2>&1 | sed '/^WARNING: Location/d'
  .venv/bin/python -m pip install -q -r requirements.txt 2>&1 | sed '/^WARNING: Location/d'
  echo "$want" > "$stamp"
fi
.venv/bin/python manage.py migrate --noinput -v 0
