#!/usr/bin/env bash
# Installs what tests/apps runs, pinned, once per change of the pins: the official MCP Apps SDK
# (@modelcontextprotocol/ext-apps: the view's App, the host's AppBridge; 1.x, and 2.x as
# ext-apps-v2), the TypeScript MCP SDK clients (v1 @modelcontextprotocol/sdk for 2025-11-25
# sessions, v2 @modelcontextprotocol/client for 2026-07-28), puppeteer-core, esbuild and the
# Node.js 22 they run on (npm ci of
# package-lock.json into node_modules/, as tests/oauth/install.sh does), and the browser,
# Debian's `chromium` package, when there is none. Run by .ci/run, and on first use by the
# scripts here; safe to run from several tests at once (a lock), quick when nothing changed.
#   tests/apps/install.sh [node|browser|all]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
what="${1:-all}"
exec 9>"$HERE/.install.lock"
flock 9

say() { echo "tests/apps: $*" >&2; }
pins() { sha256sum "$HERE/$1" | cut -d' ' -f1; }

if [ "$what" = node ] || [ "$what" = all ]; then
  stamp="$HERE/node_modules/.installed-from"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$(pins package-lock.json)" ]; then
    command -v npm >/dev/null || { say "npm is needed to install the MCP Apps SDK, puppeteer-core and esbuild"; exit 2; }
    say "installing the MCP Apps SDK, the TypeScript MCP SDK, puppeteer-core, esbuild and Node.js 22 (npm ci)"
    # --ignore-scripts: no package may download anything at install time (puppeteer-core
    # downloads no browser anyway; esbuild's binary comes in its @esbuild/linux-x64 package).
    (cd "$HERE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    pins package-lock.json > "$stamp"
  fi
fi

if [ "$what" = browser ] || [ "$what" = all ]; then
  if [ -z "${SWITCHYARD_CHROMIUM:-}" ] && ! command -v chromium >/dev/null; then
    command -v apt-get >/dev/null || { say "chromium is needed: install it, or set SWITCHYARD_CHROMIUM to a Chromium binary"; exit 2; }
    say "installing chromium (Debian package)"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
fi
