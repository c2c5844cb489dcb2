#!/usr/bin/env bash
# Instructions and heap allocations per answered HTTP request of one server role, from
# callgrind: the role (release build) runs under valgrind on CPU 1, wrk with echo.lua on
# CPU 0; 2 s of warm-up uninstrumented, then 5 s counted. Requests are the calls of hyper's
# `Http1Transaction::encode` in the profile, so requests in flight at either end do not skew
# the figure.
#
#   benches/callgrind-http.sh [ROLE] [WIRE] [CONCURRENCY]   defaults: ours-http modern 1
#   ROLE: ours-http | raw-http | rmcp-http ...   WIRE: modern | legacy
#
# Prints one line, e.g. `ours-http modern c1: 3847 requests, 83230 instructions and 97
# allocations per request`, and leaves the profile in $OUT (default
# /tmp/callgrind-ROLE-WIRE-cN.out) for `callgrind_annotate --inclusive=yes`.
# Needs valgrind and wrk (apt-get install -y valgrind wrk) and `cargo build --release -p
# switchyard-bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
role="${1:-ours-http}"
wire="${2:-modern}"
conc="${3:-1}"
out="${OUT:-/tmp/callgrind-$role-$wire-c$conc.out}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

taskset -c 1 valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
  target/release/bench role "$role" 127.0.0.1:0 2>"$log" &
server=$!
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^listening on //p' "$log" | head -n 1)"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "the role did not start:" >&2; cat "$log" >&2; kill "$server"; exit 1; }

args=(modern)
if [ "$wire" = legacy ]; then
  init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"callgrind","version":"0"}}}'
  session="$(curl -s -D - -o /dev/null "$url" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -d "$init" |
    tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')"
  [ -n "$session" ] || { echo "initialize answered without Mcp-Session-Id" >&2; kill "$server"; exit 1; }
  curl -s "$url" -H 'Content-Type: application/json' -H "Mcp-Session-Id: $session" \
    -H 'MCP-Protocol-Version: 2025-11-25' -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
  args=(legacy "$session")
fi

wrk_run() { taskset -c 0 wrk -t1 -c"$conc" -d"$1" -s benches/src/echo.lua "$url" -- "${args[@]}" >/dev/null; }
wrk_run 2s
callgrind_control -z "$server" >/dev/null 2>&1
callgrind_control -i on "$server" >/dev/null 2>&1
wrk_run 5s
callgrind_control -d "$server" >/dev/null 2>&1
callgrind_control -i off "$server" >/dev/null 2>&1
kill "$server"
wait "$server" 2>/dev/null || true

# The dump is the profile's second part ("$out.1"); sum the calls of the named functions.
python3 - "$out.1" "$role $wire c$conc" <<'EOF'
import re, sys
names, fn, requests, allocs, total = {}, None, 0, 0, 0
def name(tok):
    m = re.match(r'\((\d+)\)(?: (.*))?', tok)
    if not m:
        return tok
    if m.group(2):
        names[m.group(1)] = m.group(2)
    return names.get(m.group(1), m.group(1))
for line in open(sys.argv[1]):
    if line.startswith('fn='):
        name(line[3:].strip())
    elif line.startswith('cfn='):
        fn = name(line[4:].strip())
    elif line.startswith('calls=') and fn:
        n = int(line.split('=')[1].split()[0])
        if fn.endswith('Http1Transaction>::encode'):
            requests += n
        elif fn.endswith('__rust_alloc'):
            allocs += n
    elif line.startswith('summary:') or line.startswith('totals:'):
        total = int(line.split()[1])
if requests == 0:
    sys.exit('no request was answered while counting')
print(f"{sys.argv[2]}: {requests} requests, {total // requests} instructions and "
      f"{allocs // requests} allocations per request")
EOF
