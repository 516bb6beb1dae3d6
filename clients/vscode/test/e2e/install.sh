#!/usr/bin/env bash
# install.sh DEST: code-server + playwright-core into DEST, Debian packages as root, and the
# extension's npm packages. Idempotent: a second run with everything present takes a second.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
EXT_DIR="$(cd "$HERE/../.." && pwd)"
DEST="${1:-/tmp/agentd-vscode-e2e}"
CS_VERSION="${CS_VERSION:-4.100.3}"
PW_VERSION="${PW_VERSION:-1.65.1}"
mkdir -p "$DEST"
T0=$(date +%s)

# 1. System packages: build deps for code-server's native modules (kerberos needs gssapi
#    headers; argon2, spdlog, node-pty, native-watchdog, deviceid need a toolchain), ripgrep
#    instead of @vscode/ripgrep's GitHub download, chromium to drive the UI, iproute2 for
#    bringing loopback up inside `unshare --net`.
if [ "$(id -u)" = 0 ]; then
  need=""
  for p in build-essential python3 pkg-config libx11-dev libxkbfile-dev libsecret-1-dev \
           libkrb5-dev ripgrep chromium iproute2 nodejs npm; do
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
  done
  # nodejs/npm may come from elsewhere (nodesource, a tarball): only ask apt when missing.
  if command -v node >/dev/null && command -v npm >/dev/null; then need=$(echo "$need" | sed 's/ nodejs//; s/ npm//'); fi
  if [ -n "$(echo "$need" | tr -d ' ')" ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need
  fi
fi

# 2. The extension's own packages (esbuild, vsce, the language client...).
if [ ! -d "$EXT_DIR/node_modules" ] || [ "$EXT_DIR/package-lock.json" -nt "$EXT_DIR/node_modules/.package-lock.json" ]; then
  (cd "$EXT_DIR" && npm ci --no-audit --no-fund >"$DEST/npm-ci.log" 2>&1) || { tail -30 "$DEST/npm-ci.log"; exit 1; }
fi

have() { [ -f "$DEST/node_modules/$1/package.json" ] && node -e "process.exit(require('$DEST/node_modules/$1/package.json').version==='$2'?0:1)"; }
if have code-server "$CS_VERSION" && have playwright-core "$PW_VERSION" && [ -f "$DEST/node_modules/code-server/out/node/entry.js" ]; then
  echo "code-server $CS_VERSION and playwright-core $PW_VERSION already in $DEST"
  exit 0
fi

# Node headers: node-gyp must never try to download them.
if [ -f /usr/include/node/node.h ]; then export npm_config_nodedir=/usr; fi

# 3. Pre-seed @vscode/ripgrep's download cache with Debian's rg so its postinstall does not
#    call api.github.com.
export TMPDIR="$DEST/tmp"
mkdir -p "$TMPDIR" "$DEST/pack"
(
  cd "$DEST/pack"
  [ -f "code-server-$CS_VERSION.tgz" ] || npm pack --silent "code-server@$CS_VERSION" >/dev/null
  RG_PKG_VER=$(tar xzf "code-server-$CS_VERSION.tgz" -O package/lib/vscode/npm-shrinkwrap.json |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log((JSON.parse(s).packages["node_modules/@vscode/ripgrep"]||{}).version||""))')
  [ -n "$RG_PKG_VER" ] || exit 0
  [ -f "vscode-ripgrep-$RG_PKG_VER.tgz" ] || npm pack --silent "@vscode/ripgrep@$RG_PKG_VER" >/dev/null
  RG_TAG=$(tar xzf "vscode-ripgrep-$RG_PKG_VER.tgz" -O package/lib/postinstall.js |
    sed -n "s/^const VERSION = '\(.*\)';/\1/p")
  mkdir -p "$TMPDIR/vscode-ripgrep-cache-$RG_PKG_VER"
  tar czf "$TMPDIR/vscode-ripgrep-cache-$RG_PKG_VER/ripgrep-$RG_TAG-x86_64-unknown-linux-musl.tar.gz" \
    -C "$(dirname "$(command -v rg)")" rg
)

# 4. code-server (its postinstall refuses root without npm_config_unsafe_perm; node-pty's
#    postinstall runs `npx node-gyp`, which needs npm_config_yes=true) and playwright-core
#    (no browser download: Debian's chromium is used).
cd "$DEST"
[ -f package.json ] || npm init -y >/dev/null
npm_config_unsafe_perm=true npm_config_yes=true npm install --no-save --no-audit --no-fund --foreground-scripts \
  "code-server@$CS_VERSION" "playwright-core@$PW_VERSION" > "$DEST/npm-install.log" 2>&1 || {
  tail -40 "$DEST/npm-install.log"; exit 1; }
XDG_CONFIG_HOME="$DEST/tmp" XDG_DATA_HOME="$DEST/tmp" "$DEST/node_modules/.bin/code-server" --version
echo "install took $(( $(date +%s) - T0 ))s"
