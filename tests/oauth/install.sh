#!/usr/bin/env bash
# Installs what tests/oauth runs, pinned, once per change of the pins: oidc-provider, the
# TypeScript MCP SDK and jose (the DPoP host), the reference everything-server (the client's
# interoperability tests), and the Node.js 22 they run on (npm ci of
# package-lock.json into node_modules/), and the MCP Python SDK (requirements.txt into the venv
# .venv/). Run by .ci/run, and on first use by as.sh, client.sh and dpop_client.sh; safe to run
# from several tests at once (a lock), quick when nothing changed.
#   tests/oauth/install.sh [node|python|all]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
what="${1:-all}"
exec 9>"$HERE/.install.lock"
flock 9

say() { echo "tests/oauth: $*" >&2; }
pins() { sha256sum "$HERE/$1" | cut -d' ' -f1; }

if [ "$what" = node ] || [ "$what" = all ]; then
  stamp="$HERE/node_modules/.installed-from"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$(pins package-lock.json)" ]; then
    command -v npm >/dev/null || { say "npm is needed to install oidc-provider and the TypeScript MCP SDK"; exit 2; }
    say "installing oidc-provider, the TypeScript MCP SDK, its everything-server and Node.js 22 (npm ci)"
    (cd "$HERE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    pins package-lock.json > "$stamp"
  fi
fi

if [ "$what" = python ] || [ "$what" = all ]; then
  stamp="$HERE/.venv/.installed-from"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$(pins requirements.txt)" ]; then
    command -v python3 >/dev/null || { say "python3 is needed for the MCP Python SDK"; exit 2; }
    say "installing the MCP Python SDK (python3 -m venv, pip install -r requirements.txt)"
    python3 -m venv --clear "$HERE/.venv" >&2
    "$HERE/.venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$HERE/requirements.txt" >&2
    pins requirements.txt > "$stamp"
  fi
fi
