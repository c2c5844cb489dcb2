#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (default 600 s each, one after the other); not run
# in CI. New interesting inputs land in fuzz/corpus/TARGET; crashes in fuzz/artifacts/TARGET.
# Needs cargo-fuzz (`cargo install cargo-fuzz`). On a stable toolchain RUSTC_BOOTSTRAP=1 lets
# it pass the sanitizer flags libFuzzer builds need.
#
#   fuzz/run.sh [SECONDS] [TARGET...]      e.g. fuzz/run.sh 60 envelope
#
# SANITIZER=none drops AddressSanitizer (default: address). The targets that serve whole
# requests (dispatch, http, stdio_framing) spend about a third of their time in ASan's
# allocator (perf, 2026-12-01); safe Rust needs it only for the unsafe code underneath, so a
# long run for execution count can go without it and a shorter one keep it.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(envelope headers dispatch request_state http stdio_framing)
export RUSTC_BOOTSTRAP="${RUSTC_BOOTSTRAP:-1}"
sanitizer="${SANITIZER:-address}"
# TIMEOUT=SECONDS: how long one input may run before it counts as a hang (default 10). A
# fuzzer stopped and resumed (SIGSTOP, a suspended machine) reports the input it was on as a
# hang, so a long run that may be paused takes a larger one.
timeout="${TIMEOUT:-10}"
cargo fuzz build -O -s "$sanitizer"
for t in "${targets[@]}"; do
  echo "== $t: ${secs}s"
  # -rss_limit_mb bounds memory; -timeout flags an input that runs longer than that as a hang.
  cargo fuzz run -O -s "$sanitizer" "$t" -- -max_total_time="$secs" -rss_limit_mb=2048 -timeout="$timeout" -print_final_stats=1
done
