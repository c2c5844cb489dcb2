#!/usr/bin/env bash
# What a gateway's hop costs in instructions (callgrind), against one client round trip: the
# gateway process per relayed `tools/call` of `echo`, our stdio server answering the call
# itself, and our client making it (docs/composition.md, "What the hop costs"). Instructions do
# not depend on what else runs on the machine, so this ratio is the repeatable one; the CPU
# rows of `bench --only gateway` add what callgrind does not count (system calls, wake-ups,
# cache misses) and move with the machine.
#
#   benches/callgrind-gateway.sh [N]     default N = 1000
#
# Each figure is (instructions over 2N calls - instructions over N) / N:
# - gateway: `bench role gateway-stdio` (its upstream, `ours-stdio`, is a child process that
#   callgrind does not follow), fed N then 2N pipelined 2026-07-28 calls through
#   benches/guard/piped.py (every request already in its stdin pipe);
# - server: `bench role ours-stdio` fed the same way;
# - client: `bench role gateway-client ours-stdio N 32` (our client, 32 calls in flight, plus
#   the bench's own work per call: the arguments built with `format!` and `json!`, the answer
#   checked), its server not followed.
#
# Prints one line per process and the ratio gateway / (server + client). Needs valgrind and
# python3; builds `bench` itself (`cargo build --release -p switchyard-bench`, honouring
# CARGO_TARGET_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-1000}"
cargo build --release --quiet -p switchyard-bench
bin="${CARGO_TARGET_DIR:-target}/release/bench"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

requests() { # count
  local meta=',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}'
  for ((i = 1; i <= $1; i++)); do
    printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello %d"}%s}}\n' \
      "$i" "$i" "$meta"
  done
}

instructions() { # profile
  local counts
  counts=$(python3 benches/callgrind-count.py "$1")
  echo "${counts%% *}"
}

served() { # role count: instructions of the role serving `count` piped calls
  local role="$1" count="$2"
  requests "$count" > "$work/in"
  python3 benches/guard/piped.py "$work/in" "$work/out" \
    valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$bin" role "$role" 2> "$work/err"
  local answers
  answers=$(grep -c '"hello ' "$work/out" || true)
  if [ "$answers" -ne "$count" ]; then
    echo "$role: $answers of $count calls answered" >&2
    tail -5 "$work/err" >&2
    exit 1
  fi
  instructions "$work/cg"
}

client() { # count
  valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$bin" role gateway-client ours-stdio "$1" 32 \
    > /dev/null 2> "$work/err" || { tail -5 "$work/err" >&2; exit 1; }
  instructions "$work/cg"
}

per_call() { # first second
  echo $((($2 - $1) / n))
}

gateway=$(per_call "$(served gateway-stdio "$n")" "$(served gateway-stdio $((2 * n)))")
server=$(per_call "$(served ours-stdio "$n")" "$(served ours-stdio $((2 * n)))")
ours=$(per_call "$(client "$n")" "$(client $((2 * n)))")
echo "gateway: $gateway instructions per relayed call"
echo "server:  $server instructions per call"
echo "client:  $ours instructions per call (with the bench's own work per call)"
python3 -c "print(f'gateway / (server + client): {$gateway / ($server + $ours):.2f}')"
