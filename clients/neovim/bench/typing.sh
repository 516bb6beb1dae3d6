#!/usr/bin/env bash
# Measures typing in the chat's input while a reply streams into a 4,000-line
# transcript (headless Neovim, no daemon needed). See bench/typing.lua.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
exec nvim --headless -u NONE -i NONE --cmd "set rtp^=$HERE/.." -c "luafile $HERE/typing.lua" </dev/null
