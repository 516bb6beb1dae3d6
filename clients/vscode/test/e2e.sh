#!/usr/bin/env bash
# End-to-end tests of the extension in a real VS Code (code-server + Chromium + playwright-core),
# against the real agentd binary and the scripted fake model, offline: inside `unshare --net`
# with only loopback when root. Needs ./install.sh first. Prints "vscode-e2e: N passed, M failed".
#   AGENTD_VSCODE_E2E_DIR  where install.sh put code-server (default /tmp/agentd-vscode-e2e)
#   AGENTD_VSCODE_E2E_OUT  where this run writes the package, binaries, logs and its workspace
#                          (default: AGENTD_VSCODE_E2E_DIR), so that two checkouts can run at once
#   AGENTD / FAKEMODEL     prebuilt binaries (default: built here from ./cmd/agentd and
#                          ./internal/test/fakemodel/cmd/fakemodel)
#   ONLY                   run only the tests whose name matches this regular expression
#   SHOT_MIDTURN           save a screenshot of the chat view mid-turn to this path
#   SHOT_REVIEW_DIR        save the review screenshots (review-*.png) into this folder
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
EXT_DIR="$(cd "$HERE/.." && pwd)"
ROOT="$(cd "$EXT_DIR/../.." && pwd)"
DEST="${AGENTD_VSCODE_E2E_DIR:-/tmp/agentd-vscode-e2e}"
OUTD="${AGENTD_VSCODE_E2E_OUT:-$DEST}"
export PATH="/usr/local/go/bin:$PATH"
fail() { echo "vscode-e2e: $1"; echo "vscode-e2e: 0 passed, 1 failed"; exit 1; }

[ -f "$DEST/node_modules/code-server/out/node/entry.js" ] && [ -d "$DEST/node_modules/playwright-core" ] ||
  fail "code-server/playwright-core missing in $DEST: run clients/vscode/test/install.sh first"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || fail "chromium missing: run clients/vscode/test/install.sh (as root) first"

mkdir -p "$OUTD/bin"
# The extension, packaged as users get it.
if [ ! -d "$EXT_DIR/node_modules" ]; then (cd "$EXT_DIR" && npm ci --no-audit --no-fund >/dev/null 2>&1) || fail "npm ci failed"; fi
(cd "$EXT_DIR" && npx vsce package --no-dependencies -o "$OUTD/agentd.vsix" >"$OUTD/package.log" 2>&1) ||
  { tail -20 "$OUTD/package.log"; fail "vsce package failed"; }

# The daemon and the fake model, built from this checkout.
if [ -z "${AGENTD:-}" ]; then
  (cd "$ROOT" && CGO_ENABLED=0 go build -o "$OUTD/bin/agentd" ./cmd/agentd) 2>"$OUTD/build-agentd.log" ||
    { tail -20 "$OUTD/build-agentd.log"; fail "go build ./cmd/agentd failed: the daemon is needed for these tests"; }
  AGENTD="$OUTD/bin/agentd"
fi
if [ -z "${FAKEMODEL:-}" ]; then
  (cd "$ROOT" && go build -o "$OUTD/bin/fakemodel" ./internal/test/fakemodel/cmd/fakemodel) 2>"$OUTD/build-fakemodel.log" ||
    { tail -20 "$OUTD/build-fakemodel.log"; fail "go build ./internal/test/fakemodel/cmd/fakemodel failed"; }
  FAKEMODEL="$OUTD/bin/fakemodel"
fi

if [ -z "${FAKEOAUTH:-}" ]; then
  (cd "$ROOT" && go build -o "$OUTD/bin/fakeoauth" ./mcp/mcpauth/oauthtest/fakeoauth) 2>"$OUTD/build-fakeoauth.log" ||
    { tail -20 "$OUTD/build-fakeoauth.log"; fail "go build ./mcp/mcpauth/oauthtest/fakeoauth failed"; }
  FAKEOAUTH="$OUTD/bin/fakeoauth"
fi

export CS_ROOT="$DEST" VSIX="$OUTD/agentd.vsix" AGENTD FAKEMODEL FAKEOAUTH WORK="$OUTD/run"
export ARTIFACTS="${ARTIFACTS:-$EXT_DIR/test/e2e/artifacts}"
rm -rf "$ARTIFACTS"
OUT="$OUTD/e2e-output.log"
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
  # Loopback-only network namespace: nothing can leave the machine even by mistake.
  unshare --net sh -c 'ip link set lo up && exec node "$0"' "$HERE/e2e/run-e2e.mjs" 2>&1 | tee "$OUT"
else
  node "$HERE/e2e/run-e2e.mjs" 2>&1 | tee "$OUT"
fi
rc=${PIPESTATUS[0]}
# The runner prints the summary itself; if it died before that, say so in the same form.
grep -q '^vscode-e2e: [0-9]* passed, [0-9]* failed' "$OUT" || { echo "vscode-e2e: the runner exited $rc without a summary"; echo "vscode-e2e: 0 passed, 1 failed"; }
exit "$rc"
