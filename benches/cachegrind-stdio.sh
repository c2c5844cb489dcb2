#!/usr/bin/env bash
# What a stdio `tools/call` costs the processor beyond its instruction count, from cachegrind's
# cache and branch simulation (a repeatable stand-in for hardware counters, which VMs often
# lack): per answered request, instructions, first-level instruction and data cache misses,
# last-level misses and mispredicted branches (conditional + indirect). As
# benches/callgrind-stdio.sh does, the role reads N and then 2N requests written back to back;
# the difference over N is one request's share, start-up and shutdown cancelled out.
#
#   benches/cachegrind-stdio.sh [ROLE] [WIRE] [N]   defaults: ours-stdio legacy 10000
#   ROLE: ours-stdio | raw-stdio | ...   WIRE: legacy (the 2025-11-25 handshake first, as the
#   bench's stdio rows) | modern (2026-07-28 requests, each with its `_meta`)
#   BENCH_STDIO_RUNTIME=current-thread runs ours-stdio on a current-thread runtime.
#
# Prints one line, e.g. `ours-stdio legacy (current-thread runtime): 10000 requests; per
# request 16692 instructions, 1001 I1 misses, 26 D1 misses, 0 LL misses, 168 mispredicted
# branches (113 + 55)` (the runtime is named for the roles that have one). The
# simulated caches are the host's sizes as valgrind reads them (its `--I1`, `--D1` and `--LL`
# options override them). Needs valgrind and `cargo build --release -p switchyard-bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
role="${1:-ours-stdio}"
wire="${2:-legacy}"
n="${3:-10000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# shellcheck source=benches/stdio-requests.sh
source benches/stdio-requests.sh
require_wire "$wire"

# The run's totals of Ir I1mr D1mr+D1mw DLmr+DLmw+ILmr Bcm Bim, from the profile's summary.
measure() {
  local count="$1"
  requests "$wire" "$count" > "$work/in-$count"
  # Read through a pipe: with stdout a file, the transport falls back to blocking-thread
  # writes (docs/performance.md, "stdio on the multi-thread runtime, measured apart").
  if ! valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes --cachegrind-out-file="$work/cg-$count" \
    target/release/bench role "$role" < "$work/in-$count" 2> "$work/err-$count" | cat > "$work/out-$count"; then
    echo "$role $wire: the role or valgrind failed over $count requests" >&2
    tail -5 "$work/err-$count" >&2
    exit 1
  fi
  # Each call's answer echoes its text; an error or a tool error does not count.
  local answers
  answers=$(grep '"text":"hello ' "$work/out-$count" | grep -vc '"isError":true' || true)
  if [ "$answers" -ne "$count" ]; then
    echo "$role $wire: $answers of $count calls answered" >&2
    tail -5 "$work/err-$count" >&2
    exit 1
  fi
  if ! grep -q '^summary:' "$work/cg-$count"; then
    echo "$role $wire: cachegrind wrote no summary" >&2
    exit 1
  fi
  awk '
    /^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
    /^summary:/ {
      for (i = 2; i <= NF; i++) v[i - 1] = $i
      print v[col["Ir"]], v[col["I1mr"]], v[col["D1mr"]] + v[col["D1mw"]],
        v[col["ILmr"]] + v[col["DLmr"]] + v[col["DLmw"]], v[col["Bcm"]], v[col["Bim"]]
    }' "$work/cg-$count"
}

read -r ir1 i1_1 d1_1 ll1 bc1 bi1 < <(measure "$n")
read -r ir2 i1_2 d1_2 ll2 bc2 bi2 < <(measure $((2 * n)))
per() { echo $((($2 - $1) / n)); }
# As benches/src/servers/mod.rs reads the variable (only these two roles have a choice).
runtime=''
case "$role" in
  ours-stdio | gateway-stdio)
    runtime=' (multi-thread runtime)'
    [ "${BENCH_STDIO_RUNTIME:-}" = current-thread ] && runtime=' (current-thread runtime)'
    ;;
esac
echo "$role $wire$runtime: $n requests; per request $(per "$ir1" "$ir2") instructions," \
  "$(per "$i1_1" "$i1_2") I1 misses, $(per "$d1_1" "$d1_2") D1 misses, $(per "$ll1" "$ll2") LL misses," \
  "$(per $((bc1 + bi1)) $((bc2 + bi2))) mispredicted branches ($(per "$bc1" "$bc2") + $(per "$bi1" "$bi2"))"
