#!/usr/bin/env bash
# Unpacks Debian sid's neovim (0.12 or later, which has vim.lsp.inline_completion) into a cache
# directory, without installing anything, and prints the path of a wrapper that runs it. The
# machine's own nvim (Debian bookworm's 0.7.2) stays what it is. sid's build needs sid's glibc,
# so the wrapper runs it with sid's dynamic loader and libraries, unpacked beside it.
#
#   AGENTD_NVIM=$(bash clients/neovim/test/nvim-sid.sh) bash clients/neovim/test/run.sh inline
#
# It uses apt-get with a private sources list and state directory (one `apt-get update` of sid's
# package lists, about 30 MB, then `apt-get download`); CI does not run it.
set -euo pipefail
DIR=${AGENTD_NVIM_SID_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agentd-nvim-sid}
WRAPPER="$DIR/nvim"
if [ -x "$WRAPPER" ] && "$WRAPPER" --version >/dev/null 2>&1; then
  echo "$WRAPPER"
  exit 0
fi
mkdir -p "$DIR"/apt/lists/partial "$DIR"/apt/cache/archives/partial "$DIR"/debs "$DIR"/root
echo "deb http://deb.debian.org/debian sid main" >"$DIR/apt/sources.list"
APT=(-o Dir::Etc::sourcelist="$DIR/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
  -o Dir::State::Lists="$DIR/apt/lists" -o Dir::Cache="$DIR/apt/cache" -o Debug::NoLocking=1)
apt-get "${APT[@]}" update >&2
# neovim's Depends in sid, and libgcc-s1 for LuaJIT's unwinding.
PKGS=(neovim neovim-runtime libc6 libgcc-s1 libluajit-5.1-2 libluajit-5.1-common libtree-sitter0.26
  libunibilium4 libutf8proc3 libuv1t64 lua-lpeg lua-luv)
(cd "$DIR/debs" && rm -f ./*.deb && apt-get "${APT[@]}" download "${PKGS[@]/%//sid}" >&2)
for d in "$DIR"/debs/*.deb; do dpkg-deb -x "$d" "$DIR/root"; done
R="$DIR/root"
cat >"$WRAPPER" <<WRAP
#!/bin/sh
# Neovim from Debian sid, unpacked by nvim-sid.sh; run with sid's own loader and libraries.
export VIMRUNTIME="\${VIMRUNTIME_SID:-$R/usr/share/nvim/runtime}"
exec "$R/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$R/usr/lib/x86_64-linux-gnu" "$R/usr/bin/nvim" "\$@"
WRAP
chmod +x "$WRAPPER"
"$WRAPPER" --version | head -1 >&2
echo "$WRAPPER"
