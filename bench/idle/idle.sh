#!/bin/bash
# idle.sh BIN: the idle RSS of a static agentd, and which of its binary's pages are resident.
# Drops BIN from the page cache first (as after a reboot: how a file entered the cache decides how
# big the pages are that the kernel maps, which moves the figure by 2 MiB and more), starts it,
# runs initialize (with the settings an editor sends), initialized and agent/session/new over the
# LSP door, waits 1 s, and prints VmRSS, RssAnon and RssFile and the resident pages per ELF
# section. The page list stays in $OUT (default: a new temporary directory). Linux; python3.
set -e
B=$(readlink -f "$1")
D=$(dirname "$(readlink -f "$0")")
OUT=${OUT:-$(mktemp -d)}; mkdir -p "$OUT"
sync "$B"
python3 -c "import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)" "$B"
rm -f "$OUT/pid"
(sleep 15; echo q) | python3 "$D/drive.py" "$B" > "$OUT/pid" 2>/dev/null &
for i in $(seq 140); do sleep 0.1; [ -s "$OUT/pid" ] && break; done
PID=$(cat "$OUT/pid")
python3 "$D/resident.py" "$PID" > "$OUT/res.txt"
grep -E "VmRSS|RssAnon|RssFile" /proc/$PID/status | awk '{printf "%s %.2f MiB  ", $1, $2/1024}'; echo
python3 "$D/sections.py" "$B" "$OUT/res.txt"
wait
