#!/usr/bin/env bash
# One-shot, re-runnable setup on a fresh Debian machine:
#   Chromium (Debian package), p5 + p5.brush (npm ci), a .venv with refpool installed.
# Usage: bash scripts/setup.sh [--dev]
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
[ "${1:-}" = "--dev" ] && dev=1

chromium_bin="${REFPOOL_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium_bin" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian's chromium (needed by the renderer)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }
  else
    echo "setup: Chromium not found at $chromium_bin." >&2
    echo "       Install it with 'sudo apt-get install chromium', or set REFPOOL_CHROMIUM to its path." >&2
    exit 1
  fi
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  command -v npm >/dev/null || { echo "setup: npm is missing: apt-get install npm" >&2; exit 1; }
  echo "setup: npm ci (p5 + p5.brush, pinned in package-lock.json)"
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
req=requirements.txt
[ "$dev" = 1 ] && req=requirements-dev.txt
stamp=".venv/.refpool-$(cat $req requirements.txt pyproject.toml | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "setup: pip install -r $req (into .venv)"
  .venv/bin/pip install -q --disable-pip-version-check -r "$req"
  .venv/bin/pip install -q --disable-pip-version-check --no-deps -e .
  touch "$stamp"
fi
