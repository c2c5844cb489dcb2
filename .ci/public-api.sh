#!/usr/bin/env bash
# The public API of each publishable crate, one item a line, committed next to its Cargo.toml
# (`<crate dir>/public-api.txt`), so a change to the API shows in review as a diff of that file.
#
#   .ci/public-api.sh           regenerate the listings (commit them with the change that caused them)
#   .ci/public-api.sh --check   fail when a listing differs from what the code produces (CI)
#
# Each crate's rustdoc JSON is also read by .ci/public-paths.py, which fails when an item can be
# named by two public paths (`prelude` aside).
#
# Tool: cargo-public-api, pinned. It reads rustdoc's JSON output, which only a nightly toolchain
# writes, and each release reads one range of that format (the "Compatibility Matrix" in its
# README). 0.52.x reads nightly-2025-08-02 and later, including the `nightly` installed here
# (rustc 1.97.0-nightly 2026-05-19, rustdoc JSON format_version 57). When `nightly` is updated
# and the tool then fails to parse the JSON, pick the release the matrix names for that nightly,
# change PUBLIC_API_VERSION, and regenerate the listings (the rendering may differ slightly).
#
# Features: `--all-features`, the set docs.rs documents for each of these crates
# (`[package.metadata.docs.rs] all-features = true`), so every item a user can enable
# (nats, otel, postgres, ...) is covered, and the listing does not change when the default
# features are rearranged. A feature added or removed does change the listing, as it should.
#
# Output: `-s` (omit blanket impls such as `impl<T> Into<U> for T`: noise that follows from the
# rest). Auto-trait impls (`Send`, `Sync`, `Unpin`, ...) stay: losing one breaks users.
#
# The rustdoc JSON is built here with `cargo +nightly rustdoc` and handed to the tool with
# `--rustdoc-json`: `cargo public-api -p` looks for a proc-macro crate's JSON under the package
# name instead of the `[lib] name` and fails on switchyard-mcp-macros.
set -euo pipefail
cd "$(dirname "$0")/.."

PUBLIC_API_VERSION=0.52.0
TOOLCHAIN=nightly
# package name → directory (the listing goes to <directory>/public-api.txt)
CRATES=(
  "switchyard-mcp runtime"
  "switchyard-mcp-macros macros"
  "switchyard-mcp-tasks extensions/tasks"
  "switchyard-mcp-skills extensions/skills"
  "switchyard-mcp-skills-macros extensions/skills/macros"
  "switchyard-mcp-apps extensions/apps"
  "switchyard-mcp-gateway extensions/gateway"
  "switchyard-mcp-client client"
)

check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

. .ci/tools.sh
require_toolchain "$TOOLCHAIN" public-api
# ~4 min on a fresh machine.
install_pinned cargo-public-api "$PUBLIC_API_VERSION"

target_dir="$(target_dir)"
lib_name() { # package → its library target's name (`[lib] name`, also for a proc-macro crate)
  cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
pkg = sys.argv[1]
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == pkg:
        for t in p["targets"]:
            if {"lib", "rlib", "proc-macro"} & set(t["kind"]):
                print(t["name"]); sys.exit(0)
sys.exit("no library target in package " + pkg)' "$1"
}

failed=()
for entry in "${CRATES[@]}"; do
  read -r pkg dir <<<"$entry"
  json="$target_dir/doc/$(lib_name "$pkg").json"
  rm -f "$json"
  cargo +"$TOOLCHAIN" rustdoc --quiet -p "$pkg" --lib --all-features -- \
    -Z unstable-options --output-format json --cap-lints warn
  listing="$(cargo public-api --rustdoc-json "$json" -s --color never)"
  # Each item one public path (the prelude aside): a second home is a second promise to keep.
  if ! python3 .ci/public-paths.py "$json"; then
    failed+=("$pkg (an item with two public paths)")
  fi
  if $check; then
    if ! diff -u --label "$dir/public-api.txt (committed)" --label "$dir/public-api.txt (from the code)" \
      "$dir/public-api.txt" <(printf '%s\n' "$listing"); then
      failed+=("$pkg")
    fi
  else
    printf '%s\n' "$listing" >"$dir/public-api.txt"
    echo "$dir/public-api.txt: $(wc -l <"$dir/public-api.txt") items"
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo >&2
  echo "public API check failed: ${failed[*]} (diff or paths above; '-' committed, '+' now)." >&2
  echo "If the change is intended, regenerate the listings with .ci/public-api.sh (no --check)" >&2
  echo "and commit them; a removed or changed line is a breaking change for users." >&2
  exit 1
fi
$check && echo "public API unchanged: ${#CRATES[@]} crates"
exit 0
