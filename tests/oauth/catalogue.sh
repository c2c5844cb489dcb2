#!/usr/bin/env bash
# Runs catalogue.py (the Python SDK client reading a server's lists) in its venv, installing the
# MCP Python SDK first if needed, e.g. `tests/oauth/catalogue.sh --server http://127.0.0.1:3000/mcp`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
"$HERE/install.sh" python
exec "$HERE/.venv/bin/python" "$HERE/catalogue.py" "$@"
