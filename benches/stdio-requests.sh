# Sourced by the stdio valgrind scripts (callgrind-guard.sh, callgrind-stdio.sh,
# cachegrind-stdio.sh): the pipelined input they measure.
#
# requests WIRE COUNT writes COUNT `tools/call` requests of the `echo` tool, one a line, ids 1 to
# COUNT. WIRE `legacy`: the 2025-11-25 handshake first (`initialize`, answered, and
# `notifications/initialized`); otherwise 2026-07-28 requests, each with its `_meta`.
# require_wire WIRE exits 2 with the calling script's usage unless WIRE is one of the two.
requests() { # wire count
  local wire="$1" count="$2" meta='' i
  if [ "$wire" = legacy ]; then
    echo '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}'
    echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  else
    meta=',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}'
  fi
  for ((i = 1; i <= count; i++)); do
    printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello %d"}%s}}\n' \
      "$i" "$i" "$meta"
  done
}

require_wire() { # wire
  case "$1" in
    legacy | modern) ;;
    *) echo "usage: $0 [ROLE] [legacy|modern] [N] (not wire $1)" >&2; exit 2 ;;
  esac
}
