#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against Switchyard's client
# (examples/conformance_client.rs): the suite starts a scenario server, runs the client with the
# server's URL, and grades what the client sent.
#
#   conformance/check-client.sh             # the three runs against their baselines (what CI does)
#   conformance/check-client.sh ARGS...     # one ad-hoc run: ARGS go to `conformance client`
#                                           # unchanged, e.g. --scenario sse-retry
#
# The three runs: --suite all, --requirements 2025-11-25 and --requirements 2026-07-28, each
# against conformance/baseline-client-*.yml (expected failures; these files only ever shrink).
# Per-scenario results go to conformance-results/client-<run>/.
# CONFORMANCE_PROFILE=debug (optional) runs the debug build the workspace tests already built;
# default release. Tooling as conformance/check.sh (conformance/tools.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# shellcheck source=conformance/tools.sh
. "$ROOT/conformance/tools.sh"

install_tools
CLIENT="$(build_example conformance_client)"

suite() { "$NODE" "$CLI" client --command "$CLIENT" "$@"; }

if [ $# -gt 0 ]; then
  suite "$@"
  exit $?
fi

status=0
run() { run_suite "client-$1" "${@:2}"; }
run suite-all --suite all --expected-failures conformance/baseline-client-all.yml
run req-2025-11-25 --requirements 2025-11-25 --expected-failures conformance/baseline-client-2025-11-25.yml
run req-2026-07-28 --requirements 2026-07-28 --expected-failures conformance/baseline-client-2026-07-28.yml
exit $status
