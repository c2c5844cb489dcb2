# Shared by the scripts of .ci/ that read rustdoc JSON (public-api.sh, semver-check.sh); sourced.

# Fails unless the rustup toolchain $1 is installed; $2 names the caller in the message.
require_toolchain() {
  if ! cargo +"$1" --version >/dev/null 2>&1; then
    echo "$2: the '$1' toolchain is missing (rustup toolchain install $1 --profile minimal)" >&2
    exit 1
  fi
}

# Installs the cargo subcommand crate $1 at version $2 unless that version is installed.
# --debug: the debug build takes about half the time of a release build on 2 cores, and these
# tools read a few crates' JSON in about a second either way. A target directory of its own, not
# the workspace's (CARGO_TARGET_DIR may point there).
install_pinned() {
  local crate="$1" version="$2"
  if [ "$(cargo "${crate#cargo-}" --version 2>/dev/null)" != "$crate $version" ]; then
    echo "installing $crate $version"
    local build_dir
    build_dir="$(mktemp -d)"
    CARGO_TARGET_DIR="$build_dir" cargo install --locked --debug --quiet "$crate@$version"
    rm -rf "$build_dir"
  fi
}

# The workspace's target directory.
target_dir() {
  cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])'
}
