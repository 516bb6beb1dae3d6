#!/usr/bin/env bash
# Unit tests of the extension's own logic (no VS Code): binary discovery, settings mapping,
# private-address detection, the chat view-model reducer; plus a type check, a build and a
# package of the .vsix whose README links and code files are checked. Prints "vscode-unit: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
fail() { echo "$1"; echo "vscode-unit: 0 passed, 1 failed"; exit 1; }
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund >/tmp/agentd-vscode-npm-ci.log 2>&1 || { tail -20 /tmp/agentd-vscode-npm-ci.log; fail "npm ci failed"; }
fi
npx tsc -p . --noEmit || fail "type check failed"
rm -rf out
npx tsc -p tsconfig.test.json || fail "test compile failed"
out=$(node --test --test-reporter=tap out/test/unit/ 2>&1); rc=$?
echo "$out" | grep -E '^(not ok|# (pass|fail))' || true
[ $rc -eq 0 ] || echo "$out" | grep -A20 '^not ok' | head -80
pass=$(echo "$out" | sed -n 's/^# pass //p'); failn=$(echo "$out" | sed -n 's/^# fail //p')
npm run package >/tmp/agentd-vscode-package.log 2>&1 || { tail -20 /tmp/agentd-vscode-package.log; failn=$((failn + 1)); echo "npm run package failed"; }
# The packaged README's links and images must resolve away from the repository.
if [ -f agentd.vsix ]; then
  if node test/readme-links.mjs agentd.vsix; then pass=$((pass + 1)); else failn=$((failn + 1)); fi
  # ...and it must hold the code it runs (the lazily required language client too).
  if node test/vsix-files.mjs agentd.vsix; then pass=$((pass + 1)); else failn=$((failn + 1)); fi
fi
echo "vscode-unit: ${pass:-0} passed, ${failn:-1} failed"
[ "$rc" -eq 0 ] && [ "${failn:-1}" -eq 0 ]
