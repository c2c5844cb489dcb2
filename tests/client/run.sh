#!/usr/bin/env bash
# Installs the pinned TypeScript SDK (first run only, from the npm registry) and runs client.mjs.
#   tests/client/run.sh SERVER_COMMAND [ARGS...]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
if [ ! -d "$HERE/node_modules/@modelcontextprotocol/sdk" ]; then
  (cd "$HERE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
fi
exec node "$HERE/client.mjs" "$@"
