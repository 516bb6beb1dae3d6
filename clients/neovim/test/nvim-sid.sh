#!/usr/bin/env bash
# Unpacks Debian sid's neovim (0.12 or later, which has vim.lsp.inline_completion) into a cache
# directory, without installing anything, and prints the path of a wrapper that runs it. The
# machine's own nvim (Debian bookworm's 0.7.2) stays what it is. sid's build needs sid's glibc,
# so the wrapper runs it with sid's dynamic loader and libraries, unpacked beside it.
#
#   AGENTD_NVIM=$(bash clients/neovim/test/nvim-sid.sh) bash clients/neovim/test/run.sh inline
#
# It uses apt-get with a private sources list, an empty dpkg status and its own state directory (one
# `apt-get update` of sid's package lists, about 30 MB, then a download-only install): apt's own
# resolver picks neovim's dependencies as sid has them that day, so no package name or version is
# written down here. An unpacked copy is reused until its directory is removed; `--cached` only
# reports it (exit 1 when there is none) and fetches nothing.
set -euo pipefail
DIR=${AGENTD_NVIM_SID_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agentd-nvim-sid}
WRAPPER="$DIR/nvim"
if [ -x "$WRAPPER" ] && "$WRAPPER" --version >/dev/null 2>&1; then
  echo "$WRAPPER"
  exit 0
fi
if [ "${1:-}" = --cached ]; then
  echo "nvim-sid.sh: no unpacked sid neovim in $DIR" >&2
  exit 1
fi
rm -rf "$DIR/root" "$DIR/debs"
mkdir -p "$DIR"/apt/lists/partial "$DIR"/apt/cache "$DIR"/apt/empty.d "$DIR"/debs/partial "$DIR"/root
echo "deb http://deb.debian.org/debian sid main" >"$DIR/apt/sources.list"
: >"$DIR/apt/status"
APT=(-o Dir::Etc::sourcelist="$DIR/apt/sources.list" -o Dir::Etc::sourceparts="$DIR/apt/empty.d"
  -o Dir::Etc::preferences="$DIR/apt/preferences" -o Dir::Etc::preferencesparts="$DIR/apt/empty.d"
  -o Dir::State::Lists="$DIR/apt/lists" -o Dir::State::status="$DIR/apt/status"
  -o Dir::State::extended_states="$DIR/apt/extended_states" -o Dir::Cache="$DIR/apt/cache"
  -o Dir::Cache::archives="$DIR/debs" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
apt-get "${APT[@]}" update >&2
# Against an empty status every dependency is missing, so this fetches neovim and its whole
# Depends closure (sid's libc6 and loader included), checksummed, without installing any of it.
apt-get "${APT[@]}" install --download-only --no-install-recommends -y -q neovim >&2
ls "$DIR"/debs/neovim_*.deb >/dev/null
for d in "$DIR"/debs/*.deb; do dpkg-deb -x "$d" "$DIR/root"; done
R="$DIR/root"
# Run through the loader, nvim takes the loader's directory for its own and looks for its lib dir
# (the tree-sitter parsers 0.12's help and markdown need) at usr/lib/lib/nvim.
mkdir -p "$R/usr/lib/lib" && ln -sfn ../nvim "$R/usr/lib/lib/nvim"
cat >"$WRAPPER" <<WRAP
#!/bin/sh
# Neovim from Debian sid, unpacked by nvim-sid.sh; run with sid's own loader and libraries.
export VIMRUNTIME="\${VIMRUNTIME_SID:-$R/usr/share/nvim/runtime}"
exec "$R/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$R/usr/lib/x86_64-linux-gnu" "$R/usr/bin/nvim" "\$@"
WRAP
chmod +x "$WRAPPER"
"$WRAPPER" --version | head -1 >&2
echo "$WRAPPER"
