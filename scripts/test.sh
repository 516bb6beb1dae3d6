#!/usr/bin/env bash
# Runs every test agentd has: go vet, the Go suite with the race detector, the cross-builds the
# mobile and desktop shells need, the Neovim plugin in real headless Neovim, and the VS Code
# extension's unit tests and end-to-end tests in a real VS Code (code-server + Chromium).
#
# It installs what the tests need when it is missing (Debian packages as root, npm packages into
# the clients' folders and a cache outside the repo), so it works on a fresh machine and in CI.
# Set AGENTD_SKIP_INSTALL=1 to install nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export PATH="/usr/local/go/bin:$PATH"

failed=()
passed=()
skipped=()
SKIP=77 # a step that exits with this could not run here, and says why
step() { # step NAME CMD...
  local name=$1; shift
  echo "=== $name"
  local t0=$SECONDS rc=0
  "$@" || rc=$?
  if [ $rc -eq 0 ]; then passed+=("$name"); echo "=== $name: ok ($((SECONDS - t0)) s)"
  elif [ $rc -eq $SKIP ]; then skipped+=("$name"); echo "=== $name: SKIPPED ($((SECONDS - t0)) s)"
  else failed+=("$name"); echo "=== $name: FAILED ($((SECONDS - t0)) s)"; fi
}

install_system() {
  [ "${AGENTD_SKIP_INSTALL:-0}" = 1 ] && return 0
  [ "$(id -u)" = 0 ] || { echo "not root: skipping apt installs"; return 0; }
  local need=""
  for p in neovim ripgrep universal-ctags; do dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"; done
  if [ -n "$need" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need
  fi
}

# @modelcontextprotocol/server-everything is the reference MCP server package mcp's stdio test runs
# (TestServerEverything); it goes into a cache outside the repo, and the test finds it there.
MCP_EVERYTHING_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/agentd-test/mcp-everything"
install_mcp_everything() {
  [ "${AGENTD_SKIP_INSTALL:-0}" = 1 ] && return 0
  [ -f "$MCP_EVERYTHING_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] && return 0
  mkdir -p "$MCP_EVERYTHING_DIR" &&
    npm install --prefix "$MCP_EVERYTHING_DIR" --no-audit --no-fund --silent @modelcontextprotocol/server-everything@2026.8.31
}

# @modelcontextprotocol/conformance is the official MCP conformance suite; its client scenarios run
# against `agentd mcp probe` (internal/test/acceptance TestMCPConformanceClientScenarios), from a cache
# outside the repo. 0.2.0-alpha.12 is the newest release and the first with the 2026-07-28
# revision's client scenarios (0.1.16, the latest tag, has only the 2025 ones).
MCP_CONFORMANCE_VERSION=0.2.0-alpha.12
export AGENTD_MCP_CONFORMANCE="${AGENTD_MCP_CONFORMANCE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentd-test/mcp-conformance}"
install_mcp_conformance() {
  [ "${AGENTD_SKIP_INSTALL:-0}" = 1 ] && return 0
  local pkg="$AGENTD_MCP_CONFORMANCE/node_modules/@modelcontextprotocol/conformance/package.json"
  [ -f "$pkg" ] && grep -q "\"version\": \"$MCP_CONFORMANCE_VERSION\"" "$pkg" && return 0
  mkdir -p "$AGENTD_MCP_CONFORMANCE" &&
    npm install --prefix "$AGENTD_MCP_CONFORMANCE" --no-audit --no-fund --silent "@modelcontextprotocol/conformance@$MCP_CONFORMANCE_VERSION"
}

# The ACP door's tests (internal/test/acpdoor) drive agentd with the official ACP SDK and validate every
# message against the ACP v1 JSON schema the package ships (schema/v1/schema.json), both taken from
# a cache outside the repo, one directory per release; the tests skip without it, and fail when CI
# is set. ACP_SDK_VERSION is the newest release, the one internal/test/acpdoor's acpSDKVersion names.
ACP_SDK_VERSION=2.4.0
export AGENTD_ACP_SDK="${AGENTD_ACP_SDK:-${XDG_CACHE_HOME:-$HOME/.cache}/agentd-acp/$ACP_SDK_VERSION}"
install_acp_sdk() {
  [ "${AGENTD_SKIP_INSTALL:-0}" = 1 ] && return 0
  [ -f "$AGENTD_ACP_SDK/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json" ] && return 0
  mkdir -p "$AGENTD_ACP_SDK" &&
    npm install --prefix "$AGENTD_ACP_SDK" --no-audit --no-fund --silent "@agentclientprotocol/sdk@$ACP_SDK_VERSION"
}

# The plugin's suite again on Debian sid's Neovim (0.12 or later), unpacked into a cache by
# nvim-sid.sh; most users run a Neovim newer than the system's 0.7.2. Without it (no network,
# or AGENTD_SKIP_INSTALL=1 and nothing cached) the step skips, saying so; under CI it fails.
neovim_sid() {
  local nvim
  if [ "${AGENTD_SKIP_INSTALL:-0}" = 1 ]; then
    nvim=$(bash clients/neovim/test/nvim-sid.sh --cached) || nvim=
  else
    nvim=$(bash clients/neovim/test/nvim-sid.sh) || nvim=
  fi
  if [ -z "$nvim" ]; then
    if [ "${CI:-}" = true ]; then
      echo "neovim 0.12: clients/neovim/test/nvim-sid.sh could not unpack Debian sid's neovim"
      return 1
    fi
    echo "neovim 0.12: SKIPPED: clients/neovim/test/nvim-sid.sh could not unpack Debian sid's neovim (see above); CI=true makes this a failure"
    return $SKIP
  fi
  AGENTD_NVIM=$nvim bash clients/neovim/test/run.sh
}

go_vet() { test -z "$(gofmt -l $(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $(git ls-files '*.go'); return 1; }; go vet ./...; }
# The Go suite runs with -json so that scripts/testsummary can print, per package, how many tests
# passed, failed and were skipped (a skip is easy to miss in plain output: the provider
# conformance tables skip without ../shared, and fail instead when CI is set).
go_test() {
  local out rc; out=$(mktemp)
  go test -race -count=1 -timeout 15m -json ./... > "$out"; rc=$?
  go run ./scripts/testsummary < "$out" || rc=1
  rm -f "$out"; return $rc
}
cross_build() {
  local out rc=0; out=$(mktemp -d)
  CGO_ENABLED=0 go build -trimpath -o "$out/agentd" ./cmd/agentd || rc=1
  if [ -f "$out/agentd" ] && readelf -l "$out/agentd" 2>/dev/null | grep -q INTERP; then
    echo "agentd is dynamically linked"; rc=1
  fi
  for target in android/arm64 darwin/arm64 windows/amd64; do
    CGO_ENABLED=0 GOOS=${target%/*} GOARCH=${target#*/} go build -o "$out/agentd-${target/\//-}" ./cmd/agentd || rc=1
  done
  rm -rf "$out"; return $rc
}

step "install" install_system
step "install MCP test server" install_mcp_everything
step "install the ACP SDK" install_acp_sdk
step "install the MCP conformance suite" install_mcp_conformance
step "gofmt + go vet" go_vet
step "go test -race" go_test
step "static + cross builds" cross_build
step "neovim plugin" bash clients/neovim/test/run.sh
step "neovim plugin (0.12)" neovim_sid
step "vscode unit" bash clients/vscode/test/unit.sh
if [ "${AGENTD_SKIP_INSTALL:-0}" != 1 ]; then
  step "vscode e2e install" bash clients/vscode/test/install.sh
fi
step "vscode e2e" bash clients/vscode/test/e2e.sh

echo
echo "passed: ${passed[*]:-none}"
echo "skipped: ${skipped[*]:-none}"
echo "failed: ${failed[*]:-none}"
echo "suites: ${#passed[@]} passed, ${#failed[@]} failed, ${#skipped[@]} skipped"
[ ${#failed[@]} -eq 0 ]
