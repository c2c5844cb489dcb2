#!/usr/bin/env bash
# Instructions and heap allocations per answered HTTP request of one server role, from
# callgrind: the role (release build) runs under valgrind on CPU 1, wrk with echo.lua on
# CPU 0; 2 s of warm-up uninstrumented, then 5 s counted. Requests are the calls of hyper's
# `Http1Transaction::encode` in the profile, so requests in flight at either end do not skew
# the figure.
#
#   benches/callgrind-http.sh [ROLE] [WIRE] [CONCURRENCY]   defaults: ours-http modern 1
#   ROLE: ours-http | raw-http | rmcp-http ...   WIRE: modern | legacy
#   AUTH=rs256|es256 (ours-http only): the role requires bearer tokens (`--auth-issuer URL
#   --auth-resource URL`) from `bench issuer`, started on CPU 0, and every request carries
#   its token signed with that algorithm (the `--only auth` rows' setup).
#
# Prints one line, e.g. `ours-http modern c1: 3847 requests, 83230 instructions and 97
# allocations per request`, and leaves the profile in $OUT (default
# /tmp/callgrind-ROLE-WIRE-cN[-AUTH].out) for `callgrind_annotate --inclusive=yes`. wrk's
# check of every answer must pass (a refused token is a wrong answer).
# Needs valgrind and wrk (apt-get install -y valgrind wrk) and `cargo build --release -p
# switchyard-bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
role="${1:-ours-http}"
wire="${2:-modern}"
conc="${3:-1}"
auth="${AUTH:-}"
out="${OUT:-/tmp/callgrind-$role-$wire-c$conc${auth:+-$auth}.out}"
log="$(mktemp)"
issuer_out="$(mktemp)"
server=""
# Whatever ends the script, the server under valgrind and the issuer must not outlive it.
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  [ -n "$auth" ] && exec 3>&-
  rm -f "$log" "$issuer_out"
}
trap cleanup EXIT
trap 'echo "$0: failed at line $LINENO" >&2' ERR

server_args=()
authorization=()
if [ -n "$auth" ]; then
  # Only Switchyard's roles take the --auth-* flags; the others would run unprotected.
  case "$role" in ours-http*) ;; *) echo "AUTH needs an ours-http role, not $role" >&2; exit 1 ;; esac
  resource=https://mcp.bench.invalid/mcp
  # The issuer serves until its stdin closes (fd 3 below), then prints its request counts.
  exec 3> >(taskset -c 0 target/release/bench issuer "$resource" >"$issuer_out")
  token=""
  for _ in $(seq 1 100); do
    token="$(sed -n "s/^token $auth //p" "$issuer_out")"
    [ -n "$token" ] && break
    sleep 0.1
  done
  [ -n "$token" ] || { echo "no $auth token from bench issuer (AUTH: rs256 or es256)" >&2; exit 1; }
  server_args=(--auth-issuer "$(sed -n 's/^issuer //p' "$issuer_out")" --auth-resource "$resource")
  authorization=(-H "Authorization: Bearer $token")
fi

taskset -c 1 valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
  target/release/bench role "$role" 127.0.0.1:0 "${server_args[@]}" 2>"$log" &
server=$!
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^listening on //p' "$log" | head -n 1)"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "the role did not start:" >&2; cat "$log" >&2; exit 1; }

args=(modern)
[ -n "$auth" ] && args+=("bearer=$token")
if [ "$wire" = legacy ]; then
  init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"callgrind","version":"0"}}}'
  session="$(curl -s -D - -o /dev/null "$url" "${authorization[@]}" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -d "$init" |
    tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')"
  [ -n "$session" ] || { echo "initialize answered without Mcp-Session-Id" >&2; exit 1; }
  curl -s "$url" "${authorization[@]}" -H 'Content-Type: application/json' -H "Mcp-Session-Id: $session" \
    -H 'MCP-Protocol-Version: 2025-11-25' -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
  args=(legacy ${auth:+"bearer=$token"} "$session")
fi

wrk_run() {
  local result
  result="$(taskset -c 0 wrk -t1 -c"$conc" -d"$1" -s benches/src/echo.lua "$url" -- "${args[@]}" |
    sed -n 's/^SWITCHYARD-WRK //p')" || true
  if ! grep -q ' bad=0 connect=0 read=0 write=0 status=0 timeout=0 ' <<<"$result"; then
    echo "wrk saw wrong answers or errors: $result" >&2
    exit 1
  fi
}
wrk_run 2s
callgrind_control -z "$server" >/dev/null 2>&1
callgrind_control -i on "$server" >/dev/null 2>&1
wrk_run 5s
callgrind_control -d "$server" >/dev/null 2>&1
callgrind_control -i off "$server" >/dev/null 2>&1
kill "$server"
wait "$server" 2>/dev/null || true
server=""
if [ -n "$auth" ]; then
  exec 3>&-
  for _ in $(seq 1 50); do
    grep -q '^requests ' "$issuer_out" && break
    sleep 0.1
  done
  # A protected server fetches once, when its first token arrives (in the warm-up).
  echo "issuer: $(sed -n 's/^requests //p' "$issuer_out")" >&2
fi

# The dump is the profile's second part ("$out.1"); requests are the calls of hyper's encoder.
read -r total allocs requests < <(python3 benches/callgrind-count.py "$out.1" 'Http1Transaction>::encode')
if [ "$requests" -eq 0 ]; then
  echo "no request was answered while counting" >&2
  exit 1
fi
echo "$role $wire c$conc${auth:+ $auth}: $requests requests, $((total / requests)) instructions and $((allocs / requests)) allocations per request"
