#!/bin/bash
# anonmap.sh BIN [VAR=VALUE...]: start BIN (a static agentd) in a scratch HOME, bring it to the
# idle point on the LSP door (initialize, initialized, agent/session/new, 1 s), print its
# VmRSS/RssAnon/RssFile and threads, and what its anonymous pages hold (anonmap.py, through gdb).
# Extra arguments go into its environment (GOMAXPROCS=1, GODEBUG=...). Needs root, gdb, python3.
set -e
B=$(readlink -f "$1"); shift
D=$(dirname "$(readlink -f "$0")")
OUT=$(mktemp -d)
(sleep 12; echo q) | env "$@" python3 "$D/../idle/drive.py" "$B" > "$OUT/pid" 2>/dev/null &
for i in $(seq 100); do sleep 0.1; [ -s "$OUT/pid" ] && break; done
PID=$(cat "$OUT/pid")
grep -E "VmRSS|RssAnon|RssFile|Threads" /proc/$PID/status | tr -s ' \t\n' ' '; echo
timeout 120 gdb -p "$PID" -batch -ex "source $D/anonmap.py" 2>/dev/null | grep -E '^(heap|live|  |mcentral|persistentalloc|itab|other)'
wait; rm -rf "$OUT"
