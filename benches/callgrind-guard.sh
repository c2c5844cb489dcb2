#!/usr/bin/env bash
# CI guard on the cost of a stdio `tools/call`: instructions per request (callgrind) of
# `callgrind-echo` (package switchyard-callgrind-guard, benches/guard/: the bench's `echo` tool
# served by `switchyard::cli` on a current-thread runtime), compared with the figures committed
# in benches/callgrind-baseline.txt. Fails (exit 1) when one grows by more than 5%.
#
#   benches/callgrind-guard.sh            measure every wire of the baseline file and compare
#   benches/callgrind-guard.sh --update   measure and write the figures into the baseline file
#
# Each figure is (instructions over 2N requests - instructions over N) / N, every request
# answered, as benches/callgrind-stdio.sh counts: start-up and shutdown cancel out. What makes
# it repeatable (docs/performance.md, "CI guard"): one thread (a current-thread runtime, and
# stdin and stdout are pipes, which the transport drives from the runtime rather than from
# blocking threads), and every request already waiting in its pipe when the server starts
# (benches/guard/piped.py), so no read or write depends on timing. Run to run, the figures
# move by under 0.05% (modern) and 0.5% (legacy: its hash maps' random seeds), so 5% is a
# real change.
#
# A growth that is intended (a feature that costs what it costs): run with --update and commit
# the baseline file with the change, saying why in the commit message. A drop should be
# committed the same way, so that the guard tightens behind it.
#
# For comparisons only: GUARD_RUNTIME=multi (the bench's one-worker multi-thread runtime),
# GUARD_IO=file (stdin and stdout plain files, read and written on blocking threads),
# GUARD_BASELINE=FILE (other wires or N), GUARD_VALGRIND_ARGS (more valgrind options).
#
# Needs valgrind (apt-get install -y valgrind) and python3; builds the binary itself
# (`cargo build --release -p switchyard-callgrind-guard`, honouring CARGO_TARGET_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=${GUARD_BASELINE:-benches/callgrind-baseline.txt}
limit_pct=5
update=false
case "${1:-}" in
  "") ;;
  --update) update=true ;;
  *) echo "usage: $0 [--update]" >&2; exit 2 ;;
esac

cargo build --release --quiet -p switchyard-callgrind-guard
bin="${CARGO_TARGET_DIR:-target}/release/callgrind-echo"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# shellcheck source=benches/stdio-requests.sh
source benches/stdio-requests.sh

# Total instructions and allocations of one run over `count` requests of `wire`.
measure() { # wire count
  local wire="$1" count="$2" f="$work/$1-$2"
  requests "$wire" "$count" > "$f.in"
  local status=0
  if [ "${GUARD_IO:-}" = file ]; then
    valgrind --tool=callgrind ${GUARD_VALGRIND_ARGS:-} --callgrind-out-file="$f.cg" \
      "$bin" ${GUARD_RUNTIME:-} < "$f.in" > "$f.out" 2> "$f.err" || status=$?
  else
    python3 benches/guard/piped.py "$f.in" "$f.out" valgrind --tool=callgrind ${GUARD_VALGRIND_ARGS:-} \
      --callgrind-out-file="$f.cg" "$bin" ${GUARD_RUNTIME:-} 2> "$f.err" || status=$?
  fi
  local answers expected=$count
  answers=$(grep -sc '"result"' "$f.out" || true)
  answers=${answers:-0}
  [ "$wire" = legacy ] && expected=$((count + 1))
  if [ "$status" -ne 0 ] || [ "$answers" -ne "$expected" ]; then
    echo "$wire, $count requests: exit status $status, $answers of $expected requests answered" >&2
    grep -v '^==[0-9]*==' "$f.err" | tail -5 >&2 # the server's own lines, not valgrind's
    exit 1
  fi
  local counts
  counts=$(python3 benches/callgrind-count.py "$f.cg")
  echo "${counts% *}"
}

# Instructions and allocations per request of `wire` over N and 2N requests.
per_request() { # wire n
  local ir1 al1 ir2 al2
  read -r ir1 al1 < <(measure "$1" "$2")
  read -r ir2 al2 < <(measure "$1" $((2 * $2)))
  echo "$(((ir2 - ir1) / $2)) $(((al2 - al1) / $2))"
}

status=0
lines=()
while read -r wire n base_ir base_al; do
  read -r ir al < <(per_request "$wire" "$n")
  if $update; then
    echo "$wire (N = $n): $ir instructions ($al allocations) per request, was $base_ir ($base_al)"
    lines+=("$wire $n $ir $al")
    continue
  fi
  verdict=$(python3 -c "
ir, base, limit = $ir, $base_ir, $limit_pct
r = ir / base
print(f'{r:.4f}', 'over' if r > 1 + limit / 100 else 'drop' if r < 1 - limit / 200 else 'ok')")
  ratio="${verdict% *}"
  echo "$wire (N = $n): $ir instructions per request, baseline $base_ir, ratio $ratio ($al allocations, baseline $base_al)"
  case "${verdict#* }" in
    over)
      echo "  FAIL: more than +$limit_pct% over the committed figure." >&2
      status=1
      ;;
    drop)
      echo "  The cost dropped: commit the new figure (benches/callgrind-guard.sh --update) so the guard tightens."
      ;;
  esac
done < <(grep -v '^#' "$baseline" | grep -v '^[[:space:]]*$')

if $update; then
  {
    grep '^#' "$baseline"
    printf '%s\n' "${lines[@]}"
  } > "$work/baseline"
  sed -i "s/^# Measured: .*/# Measured: $(date -u +%Y-%m-%d), valgrind $(valgrind --version | sed 's/valgrind-//'), $(rustc --version | cut -d' ' -f2)./" "$work/baseline"
  cp "$work/baseline" "$baseline"
  echo "wrote $baseline: commit it with the change that moved the figures, saying why."
elif [ "$status" -ne 0 ]; then
  cat >&2 <<MSG
Instructions per tools/call grew by more than $limit_pct%. If the growth is intended, run
benches/callgrind-guard.sh --update and commit $baseline with the change, saying why; if
not, find it with callgrind_annotate (docs/performance.md, "Per-request cost").
MSG
fi
exit "$status"
