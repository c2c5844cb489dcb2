#!/usr/bin/env bash
# Instructions and heap allocations per answered stdio `tools/call` of one server role, from
# callgrind: the role (release build) reads a file of N requests written back to back and runs
# to its end under valgrind, once with N and once with 2N; the difference over N is the cost of
# one request, start-up and shutdown cancelled out. Every request must be answered.
#
#   benches/callgrind-stdio.sh [ROLE] [WIRE] [N]   defaults: ours-stdio modern 2000
#   ROLE: ours-stdio | raw-stdio | rmcp-stdio ...   WIRE: modern (2026-07-28 requests, each with
#   its `_meta`) | legacy (the 2025-11-25 handshake first)
#
# Prints one line, e.g. `ours-stdio modern: 2000 requests, 41234 instructions and 30
# allocations per request`. Needs valgrind (apt-get install -y valgrind) and `cargo build
# --release -p switchyard-bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
role="${1:-ours-stdio}"
wire="${2:-modern}"
n="${3:-2000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# shellcheck source=benches/stdio-requests.sh
source benches/stdio-requests.sh
require_wire "$wire"

# Total instructions and allocation calls of one run over `count` requests.
measure() {
  local count="$1"
  requests "$wire" "$count" > "$work/in-$count"
  if ! valgrind --tool=callgrind --callgrind-out-file="$work/cg-$count" \
    target/release/bench role "$role" < "$work/in-$count" > "$work/out-$count" 2> "$work/err-$count"; then
    echo "$role $wire: the role or valgrind failed over $count requests" >&2
    tail -5 "$work/err-$count" >&2
    exit 1
  fi
  local answers expected=$count
  answers=$(grep -c '"result"' "$work/out-$count" || true)
  [ "$wire" = legacy ] && expected=$((count + 1))
  if [ "$answers" -ne "$expected" ]; then
    echo "$role $wire: $answers of $expected requests answered" >&2
    tail -5 "$work/err-$count" >&2
    exit 1
  fi
  local counts
  counts=$(python3 benches/callgrind-count.py "$work/cg-$count")
  echo "${counts% *}"
}

read -r ir1 al1 < <(measure "$n")
read -r ir2 al2 < <(measure $((2 * n)))
echo "$role $wire: $n requests, $(((ir2 - ir1) / n)) instructions and $(((al2 - al1) / n)) allocations per request"
