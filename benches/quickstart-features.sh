#!/usr/bin/env bash
# The quickstart built as a user's crate would build it, with the runtime's default features and
# stdio-only (`default-features = false, features = ["cli"]`): the number of crates in each
# dependency graph and a clean debug build's wall time, each variant in a target directory of
# its own, alternating, ROUNDS times (default 1). Prints a Markdown table (docs/performance.md).
#
#   benches/quickstart-features.sh [ROUNDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-1}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

make_crate() { # name runtime-dependency-options
  mkdir -p "$work/$1/src"
  cp "$root/examples/quickstart.rs" "$work/$1/src/main.rs"
  cp "$root/Cargo.lock" "$work/$1/"
  cat > "$work/$1/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.1.0"
edition = "2024"
[dependencies]
switchyard = { package = "switchyard-mcp", path = "$root/runtime"$2 }
serde = { version = "1", features = ["derive"] }
schemars = "1.2"
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
[workspace]
TOML
}
make_crate qs-default ""
make_crate qs-stdio ', default-features = false, features = ["cli"]'

declare -A crates times
for v in qs-default qs-stdio; do
  crates[$v]=$(cd "$work/$v" && cargo tree -q -e normal --prefix none | sed 's/ (\*)//' | sort -u | wc -l)
  times[$v]=""
done
for round in $(seq 1 "$rounds"); do
  for v in qs-default qs-stdio; do
    start=$(date +%s.%N)
    (cd "$work/$v" && CARGO_TARGET_DIR="$work/$v/target" cargo build -q)
    end=$(date +%s.%N)
    rm -rf "$work/$v/target"
    times[$v]="${times[$v]} $(printf '%.0f' "$(echo "$end - $start" | bc)")"
  done
done
echo "| quickstart built with | crates in the graph | clean debug build, s (each round) |"
echo "|---|---|---|"
echo "| default features | ${crates[qs-default]} |${times[qs-default]} |"
echo "| \`default-features = false, features = [\"cli\"]\` (stdio only) | ${crates[qs-stdio]} |${times[qs-stdio]} |"
