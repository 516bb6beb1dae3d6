#!/usr/bin/env bash
# Installs what the VS Code end-to-end tests need, offline-capable and idempotent:
# Debian's chromium, ripgrep and the build packages code-server's native modules need (as
# root), then code-server 4.100.3 (VS Code 1.100.3, the last release for Node 20) and
# playwright-core from the npm registry into $AGENTD_VSCODE_E2E_DIR (default
# /tmp/agentd-vscode-e2e), and the extension's own npm packages (npm ci).
# Adapted from ../shared/notes/vscode-e2e/install.sh; e2e/install.sh says why each offline workaround is there.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
exec bash "$HERE/e2e/install.sh" "${AGENTD_VSCODE_E2E_DIR:-/tmp/agentd-vscode-e2e}"
