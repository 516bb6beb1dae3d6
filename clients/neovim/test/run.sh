#!/usr/bin/env bash
# Runs the Neovim plugin's tests: every case of every test/*_spec.lua in its
# own headless Neovim (minimal init, hard timeout), against the real agentd
# binary and the fake model server, both built here into a temp dir.
# Installs nothing: CI's scripts/test.sh installs Debian's neovim first.
# AGENTD_NVIM names another nvim to run them with (nvim-sid.sh unpacks a 0.12
# one, for the cases of Neovim's own vim.lsp.inline_completion). A case that
# does not apply to this Neovim skips, saying why.
# Prints "neovim: N passed, M failed, K skipped" last; exits non-zero on any
# failure.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
TIMEOUT=${AGENTD_NVIM_TEST_TIMEOUT:-90}
FILTER=${1:-}
NVIM=${AGENTD_NVIM:-nvim}

if ! command -v "$NVIM" >/dev/null 2>&1; then
  echo "neovim: $NVIM is not on PATH; install Debian's neovim package (apt-get install neovim) to run these tests"
  echo "neovim: 0 passed, 1 failed"
  exit 1
fi
echo "neovim: $("$NVIM" --version | head -1)"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/bin"
export PATH="/usr/local/go/bin:$PATH"

if out=$(cd "$ROOT" && CGO_ENABLED=0 go build -o "$TMP/bin/agentd" ./cmd/agentd 2>&1); then
  export AGENTD_BIN="$TMP/bin/agentd"
else
  export AGENTD_BIN_ERROR="go build ./cmd/agentd failed: $(echo "$out" | head -5 | tr '\n' ' ')"
  echo "neovim: $AGENTD_BIN_ERROR"
fi
if out=$(cd "$ROOT" && go build -o "$TMP/bin/fakemodel" ./internal/test/fakemodel/cmd/fakemodel 2>&1); then
  export FAKEMODEL_BIN="$TMP/bin/fakemodel"
else
  export FAKEMODEL_BIN_ERROR="go build ./internal/test/fakemodel/cmd/fakemodel failed: $(echo "$out" | head -5 | tr '\n' ' ')"
  echo "neovim: $FAKEMODEL_BIN_ERROR"
fi

# A stdio MCP server (mcp's own test server) for the MCP end-to-end case.
if out=$(cd "$ROOT" && go build -o "$TMP/bin/mcpserver" ./mcp/internal/testserver 2>&1); then
  export MCPSERVER_BIN="$TMP/bin/mcpserver"
else
  export MCPSERVER_BIN_ERROR="go build ./mcp/internal/testserver failed: $(echo "$out" | head -5 | tr '\n' ' ')"
  echo "neovim: $MCPSERVER_BIN_ERROR"
fi

# The fake OAuth authorization server and the MCP server it protects, for the sign-in case.
if out=$(cd "$ROOT" && go build -o "$TMP/bin/fakeoauth" ./mcp/mcpauth/oauthtest/fakeoauth 2>&1); then
  export FAKEOAUTH_BIN="$TMP/bin/fakeoauth"
else
  export FAKEOAUTH_BIN_ERROR="go build ./mcp/mcpauth/oauthtest/fakeoauth failed: $(echo "$out" | head -5 | tr '\n' ' ')"
  echo "neovim: $FAKEOAUTH_BIN_ERROR"
fi

passed=0
failed=0
skipped=0
failures=()
n=0
for spec in "$HERE"/*_spec.lua; do
  base=$(basename "$spec" .lua)
  names="$TMP/$base.names"
  timeout -k 5 30 "$NVIM" --headless -u "$HERE/minimal_init.lua" \
    -c "lua require('harness').list('$spec', '$names')" </dev/null >/dev/null 2>&1
  if [ ! -s "$names" ]; then
    echo "FAIL $base: could not list its cases"
    failed=$((failed + 1)); failures+=("$base")
    continue
  fi
  while IFS= read -r name; do
    [ -n "$FILTER" ] && [[ "$base: $name" != *"$FILTER"* ]] && continue
    n=$((n + 1))
    case_dir="$TMP/case$n"
    mkdir -p "$case_dir"/{config,state,cache,data,home}
    result="$case_dir/result"
    start=$SECONDS
    AGENTD_TEST_SPEC="$spec" AGENTD_TEST_CASE="$name" AGENTD_TEST_RESULT="$result" \
      HOME="$case_dir/home" XDG_CONFIG_HOME="$case_dir/config" XDG_STATE_HOME="$case_dir/state" \
      XDG_CACHE_HOME="$case_dir/cache" XDG_DATA_HOME="$case_dir/data" \
      timeout -k 5 "$TIMEOUT" "$NVIM" --headless -u "$HERE/minimal_init.lua" \
      -c "lua require('harness').run()" </dev/null >"$case_dir/out" 2>&1
    rc=$?
    secs=$((SECONDS - start))
    if [ $rc -eq 0 ] && [ "$(head -1 "$result" 2>/dev/null)" = "ok" ]; then
      echo "ok   $base: $name (${secs}s)"
      passed=$((passed + 1))
    elif [ $rc -eq 0 ] && [ "$(head -1 "$result" 2>/dev/null)" = "skip" ]; then
      echo "skip $base: $name: $(sed -n 2p "$result")"
      skipped=$((skipped + 1))
    else
      echo "FAIL $base: $name (${secs}s, exit $rc)"
      if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "     timed out after ${TIMEOUT}s"
      fi
      sed 's/^/     /' "$result" 2>/dev/null | head -80
      sed 's/^/     nvim: /' "$case_dir/out" | tail -20
      log=$(find "$case_dir/cache" -name 'lsp.log' 2>/dev/null | head -1)
      if [ -n "$log" ]; then
        echo "     --- lsp.log (tail):"
        tail -25 "$log" | cut -c1-400 | sed 's/^/     /'
      fi
      failed=$((failed + 1)); failures+=("$base: $name")
    fi
  done <"$names"
done

echo "neovim: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
