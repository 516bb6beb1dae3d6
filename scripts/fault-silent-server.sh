#!/usr/bin/env bash
# Fault run for issue 19 item 1: a model server that accepts the request and then says nothing.
# Starts such a server on 127.0.0.1 (python3), runs one `agentd exec` turn against it and prints,
# in seconds from the start of the turn, when each request reached the server, when each notice
# came and when the turn ended. Nothing leaves the machine.
#
#   scripts/fault-silent-server.sh                 # the default limit (120 s): takes about 4 min
#   FIRST_BYTE_TIMEOUT=5 scripts/fault-silent-server.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/agentd" ./cmd/agentd

python3 -u - "$tmp/port" >"$tmp/server.log" <<'PY' &
import socket, sys, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
def hold(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            return
        buf += d
    print("request %.3f %s" % (time.time(), buf.split(b"\r\n")[0].decode()), flush=True)
    while c.recv(65536):  # say nothing until the client hangs up
        pass
while True:
    c, _ = s.accept()
    threading.Thread(target=hold, args=(c,), daemon=True).start()
PY
while [ ! -s "$tmp/port" ]; do sleep 0.1; done
port=$(cat "$tmp/port")

mkdir -p "$tmp/config/agentd" "$tmp/work"
limit=""
[ -n "${FIRST_BYTE_TIMEOUT:-}" ] && limit=", \"firstByteTimeout\": $FIRST_BYTE_TIMEOUT"
cat >"$tmp/config/agentd/config.json" <<JSON
{"provider": "silent", "providers": {"silent": {"apiType": "openai", "baseUrl": "http://127.0.0.1:$port/v1", "model": "m"$limit}}}
JSON

start=$(date +%s.%N)
XDG_CONFIG_HOME="$tmp/config" XDG_STATE_HOME="$tmp/state" "$tmp/agentd" exec --json --mode plan --cwd "$tmp/work" "hi" 2>/dev/null |
	while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$tmp/turn.log" || true
end=$(date +%s.%N)

python3 - "$start" "$end" "$tmp/server.log" "$tmp/turn.log" <<'PY'
import json, sys
start, end = float(sys.argv[1]), float(sys.argv[2])
rows = []
for l in open(sys.argv[3]):
    _, t, what = l.split(" ", 2)
    rows.append((float(t), "server got " + what.strip()))
for l in open(sys.argv[4]):
    t, j = l.split(" ", 1)
    ev = json.loads(j)
    u = ev.get("update") or {}
    if u.get("sessionUpdate") == "notice":
        rows.append((float(t), "notice (%s): %s" % (u.get("severity"), u.get("title", "")[:160])))
    elif "result" in ev:
        rows.append((float(t), "turn ended: " + json.dumps(ev["result"])[:300]))
requests = sum(1 for _, w in rows if w.startswith("server got"))
for t, what in sorted(rows):
    print("%8.1f s  %s" % (t - start, what))
print("%8.1f s  agentd exited; %d requests" % (end - start, requests))
PY
