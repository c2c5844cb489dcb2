#!/usr/bin/env bash
# Runs the OAuth-signing MCP host (client.py) in its venv, installing the MCP Python SDK first if
# needed. Arguments go to client.py, e.g. `tests/oauth/client.sh --server http://127.0.0.1:3000/mcp`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
"$HERE/install.sh" python
exec "$HERE/.venv/bin/python" "$HERE/client.py" "$@"
