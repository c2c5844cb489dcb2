#!/usr/bin/env bash
# Semver check of the library crates against the released API: the revision named in
# `.ci/semver-baseline` is the last release (what users have); the working tree is the next one.
#
#   .ci/semver-check.sh    fail when the working tree breaks that API without the version to say so
#
# How: rustdoc JSON of each crate is built twice with the `nightly` toolchain (the format
# cargo-public-api reads too), once from a git worktree of the baseline revision and once from
# the working tree, into the same target directory, so dependencies are documented once. Then
# cargo-semver-checks (pinned) compares the two and reads the release type from the versions:
#
# - version unchanged (main between releases): the changes must fit a minor release; additions
#   pass, anything that breaks a user fails (`--release-type minor`);
# - version raised: what that raise allows (0.2.x → 0.3.0 is a major release for a 0.x crate,
#   so it may break; 0.2.0 → 0.2.1 may not).
#
# A break that is meant: raise `[workspace.package] version` in Cargo.toml. A release: commit
# it, then set `.ci/semver-baseline` to that commit (one line, shows in review like a tag).
#
# The proc-macro crates are not checked here: their API is the attributes they accept, which
# trybuild cases under ui-tests/ hold. Nor, yet, is the client (switchyard-mcp-client): it is
# being built up across releases (issue 32) and joins this list in the release that completes
# it; until then its public-api.txt diff shows every change in review. The MCP Apps extension
# (switchyard-mcp-apps) and the Gateway extension (switchyard-mcp-gateway) are new in 0.3 and
# join once a release has them, as the baseline lacks them.
set -euo pipefail
cd "$(dirname "$0")/.."

SEMVER_CHECKS_VERSION=0.51.0
TOOLCHAIN=nightly
# package name → library name (the rustdoc JSON's file name)
CRATES=(
  "switchyard-mcp switchyard"
  "switchyard-mcp-tasks switchyard_tasks"
  "switchyard-mcp-skills switchyard_skills"
)

baseline="$(grep -v '^#' .ci/semver-baseline | tr -d '[:space:]')"
if ! git cat-file -e "$baseline^{commit}" 2>/dev/null; then
  echo "semver: baseline revision '$baseline' (.ci/semver-baseline) is not in this clone's history" >&2
  exit 1
fi
. .ci/tools.sh
require_toolchain "$TOOLCHAIN" semver
# ~10 min on a fresh machine.
install_pinned cargo-semver-checks "$SEMVER_CHECKS_VERSION"

target_dir="$(target_dir)"
work="$(mktemp -d)"
cleanup() {
  git worktree remove --force "$work/baseline" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
git worktree add --quiet --detach "$work/baseline" "$baseline"

# rustdoc JSON of every crate, from the tree at $1 built in target directory $3, copied to
# $2/<lib>.json.
document() {
  local tree="$1" out="$2" target="$3"
  mkdir -p "$out"
  for entry in "${CRATES[@]}"; do
    read -r pkg lib <<<"$entry"
    rm -f "$target/doc/$lib.json"
    (cd "$tree" && CARGO_TARGET_DIR="$target" cargo +"$TOOLCHAIN" rustdoc --quiet -p "$pkg" --lib --all-features -- \
      -Z unstable-options --output-format json --cap-lints allow)
    cp "$target/doc/$lib.json" "$out/$lib.json"
  done
}
# Each tree in a target directory of its own: cargo names a workspace path crate's artifacts
# without its path, so one tree's `switchyard` could stand in for the other's when a crate
# depends on API the baseline lacks (a crate of the tree then fails to document).
document "$work/baseline" "$work/old" "$target_dir/semver-baseline"
document "$PWD" "$work/new" "$target_dir"

version_of() { # the workspace version in the Cargo.toml at $1
  python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["workspace"]["package"]["version"])' "$1/Cargo.toml"
}
old_version="$(version_of "$work/baseline")"
new_version="$(version_of "$PWD")"
release_type=()
if [ "$old_version" = "$new_version" ]; then
  release_type=(--release-type minor)
fi
echo "semver: baseline $baseline (v$old_version) → working tree (v$new_version)${release_type:+, same version: checked as a minor release}"

failed=()
for entry in "${CRATES[@]}"; do
  read -r pkg lib <<<"$entry"
  if ! cargo semver-checks --color never "${release_type[@]}" \
    --baseline-rustdoc "$work/old/$lib.json" --current-rustdoc "$work/new/$lib.json"; then
    failed+=("$pkg")
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo >&2
  echo "semver: ${failed[*]} break the API of $baseline (v$old_version) without a version that allows it." >&2
  echo "Keep the old API (deprecate, add beside it), or raise the workspace version in Cargo.toml." >&2
  exit 1
fi
echo "semver: ${#CRATES[@]} crates compatible with $baseline (v$old_version)"
