#!/usr/bin/env bash
# Builds agentd from this checkout into bin/<platform>-<arch>/ (VS Code's names), where the
# extension finds it when "agentd.path" is empty, then packages a .vsix that ships it.
# Usage: bundle-agentd.sh [GOOS/GOARCH ...]   (default: this machine)
set -euo pipefail
cd "$(dirname "$0")"
ROOT="$(cd ../.. && pwd)"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("$(go env GOOS)/$(go env GOARCH)")
for t in "${targets[@]}"; do
  goos=${t%/*}; goarch=${t#*/}
  case "$goos" in windows) platform=win32 ;; *) platform=$goos ;; esac
  case "$goarch" in amd64) arch=x64 ;; 386) arch=ia32 ;; *) arch=$goarch ;; esac
  exe=agentd; [ "$goos" = windows ] && exe=agentd.exe
  mkdir -p "bin/$platform-$arch"
  (cd "$ROOT" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -o "clients/vscode/bin/$platform-$arch/$exe" ./cmd/agentd)
  echo "bin/$platform-$arch/$exe"
done
npm run package
