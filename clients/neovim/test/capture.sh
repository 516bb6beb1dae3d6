#!/usr/bin/env bash
# Prints a screen capture (tmux capture-pane, as text) of the chat mid-turn
# with a permission question showing its diff, for the README. Builds agentd
# and the fake model like run.sh, runs Neovim in a detached 110x34 tmux
# session and captures the screen once the question is asked. Needs tmux.
# CAPTURE_KEYS="j j" sends those keys (tmux send-keys) and captures again.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
command -v tmux >/dev/null || { echo "capture: tmux is not installed (apt-get install tmux)" >&2; exit 1; }
TMP=$(mktemp -d)
SOCK="$TMP/tmux.sock"
cleanup() {
  tmux -S "$SOCK" kill-server 2>/dev/null || true
  [ -n "${FM_PID:-}" ] && kill "$FM_PID" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
export PATH="/usr/local/go/bin:$PATH"
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$TMP/agentd" ./cmd/agentd && go build -o "$TMP/fakemodel" ./internal/test/fakemodel/cmd/fakemodel)

mkdir -p "$TMP/proj" "$TMP/home" "$TMP/xdg"/{config,state,cache,data}
cat >"$TMP/proj/stats.go" <<'GO'
package stats

// Mean returns the arithmetic mean of xs.
func Mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
GO
cat >"$TMP/script.json" <<'JSON'
{"routes": [{"match": "You name coding conversations", "turn": {"text": "Guard Mean against empty input"}}],
 "turns": [
  {"reasoning": "Mean divides by zero on an empty slice.", "text": "Mean divides by zero when xs is empty; I will return 0 for that case.",
   "toolCalls": [{"name": "edit_file", "arguments": {"path": "stats.go", "edits": [
     {"old_text": "func Mean(xs []float64) float64 {\n\tvar sum float64", "new_text": "func Mean(xs []float64) float64 {\n\tif len(xs) == 0 {\n\t\treturn 0\n\t}\n\tvar sum float64"}]}}]},
  {"text": "Done."}
 ]}
JSON
"$TMP/fakemodel" --script "$TMP/script.json" >"$TMP/url" </dev/null &
FM_PID=$!
for _ in $(seq 100); do [ -s "$TMP/url" ] && break; sleep 0.1; done
URL=$(head -1 "$TMP/url")

cat >"$TMP/init.lua" <<LUA
vim.opt.runtimepath:prepend("$HERE/..")
vim.opt.swapfile = false
vim.o.shadafile = "NONE"
vim.o.termguicolors = false
vim.cmd("runtime plugin/agentd.lua")
require("agentd").setup({
  cmd = { "$TMP/agentd", "--stdio" },
  cwd = "$TMP/proj",
  settings = { provider = "fake", providers = { fake = { apiType = "openai", baseUrl = "$URL", model = "fake-model" } } },
  mode = "ask",
  chat = { width = 0.5 },
})
vim.o.statusline = "%f %m%=%{v:lua.require'agentd'.status()} "
vim.cmd("edit $TMP/proj/stats.go")
vim.defer_fn(function()
  vim.cmd("AgentdChat")
  require("agentd").prompt("Mean panics on an empty slice; fix it")
end, 300)
LUA

tmux -S "$SOCK" -f /dev/null new-session -d -x 110 -y 34 \
  "cd $TMP/proj && HOME=$TMP/home XDG_CONFIG_HOME=$TMP/xdg/config XDG_STATE_HOME=$TMP/xdg/state XDG_CACHE_HOME=$TMP/xdg/cache XDG_DATA_HOME=$TMP/xdg/data TERM=xterm-256color nvim -u $TMP/init.lua"
for _ in $(seq 150); do
  if tmux -S "$SOCK" capture-pane -p | grep -q "scroll the change"; then
    break
  fi
  sleep 0.2
done
sleep 0.5
tmux -S "$SOCK" capture-pane -p | sed 's/[[:space:]]*$//'
if [ -n "${CAPTURE_KEYS:-}" ]; then tmux -S "$SOCK" send-keys $CAPTURE_KEYS; sleep 1; echo =====; tmux -S "$SOCK" capture-pane -p | sed "s/[[:space:]]*$//"; fi
