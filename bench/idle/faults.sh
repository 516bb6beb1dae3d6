#!/bin/bash
# faults.sh BIN DIR: every page fault of BIN's way to idle (dropped page cache, as idle.sh), with
# call chains, from perf's software page-fault event; writes DIR/faults.txt (perf script) for
# ft.py. Each fault in the binary's file mapping makes a 64 KB window resident. Linux; perf.
set -e
B=$(readlink -f "$1"); O=$2
D=$(dirname "$(readlink -f "$0")")
mkdir -p "$O"
sync "$B"
python3 -c "import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)" "$B"
(sleep 8; echo q) | python3 "$D/drive.py" perf record -q -o "$O/perf.data" -e page-faults -c 1 -d -g "$B" >/dev/null 2>&1
perf script -i "$O/perf.data" -F addr,ip,sym 2>/dev/null > "$O/faults.txt"
echo "$(grep -c '^ *[0-9a-f]* ' "$O/faults.txt") faults in $O/faults.txt"
