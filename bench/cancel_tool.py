#!/usr/bin/env python3
"""session/cancel while a CPU-heavy tool runs: search_text over a generated tree (the search
engine keeps every CPU busy), cancelled as soon as its tool_call is announced; reports the time
from the cancel to the prompt's cancelled answer, per binary, rounds alternating between them.

usage: python3 bench/cancel_tool.py BIN[,BIN...] [ROUNDS] [FILES]   (ACP door, replay model)
"""
import json, os, statistics, subprocess, sys, tempfile, time

def send(p, msg):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", **msg}) + "\n").encode()); p.stdin.flush()

def until(p, pred):
    while True:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("agentd ended early")
        m = json.loads(line)
        if pred(m):
            return m

def tree(root, n):
    os.makedirs(root + "/src")
    body = "".join(f"func fn{i}(a, b int) int {{ return a*{i} + b - {i}%7 }}\n" for i in range(60))
    for i in range(n):
        d = f"{root}/src/d{i // 500}"
        os.makedirs(d, exist_ok=True)
        with open(f"{d}/f{i}.go", "w") as f:
            f.write(f"package d{i // 500}\n\n" + body * 8)

def main():
    bins = sys.argv[1].split(",")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    files = int(sys.argv[3]) if len(sys.argv) > 3 else 4000
    with tempfile.TemporaryDirectory() as home:
        tree(home + "/w", files)
        os.makedirs(home + "/config/agentd")
        # A pattern no literal prefilter narrows: every line goes through the regexp engine.
        call = {"name": "search_text", "args": {"pattern": "[a-z]+[0-9]+q[a-z]", "path": "{{cwd}}", "max_results": 10}}
        script = {"title": "T", "responses": [{"toolCalls": [call], "stopReason": "tool_use"}, {"text": "done"}] * (rounds + 2)}
        with open(home + "/replay.json", "w") as f:
            json.dump(script, f)
        with open(home + "/config/agentd/config.json", "w") as f:
            json.dump({"provider": "r", "providers": {"r": {"apiType": "replay", "baseUrl": home + "/replay.json", "model": "m"}}}, f)
        env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_STATE_HOME": home + "/state",
               "XDG_CACHE_HOME": home + "/cache", "XDG_DATA_HOME": home + "/data"}
        procs = []
        for b in bins:
            p = subprocess.Popen([b, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, env=env, cwd=home + "/w")
            send(p, {"id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}})
            until(p, lambda m: m.get("id") == 1)
            send(p, {"id": 2, "method": "session/new", "params": {"cwd": home + "/w", "mcpServers": []}})
            sid = until(p, lambda m: m.get("id") == 2)["result"]["sessionId"]
            procs.append((p, sid))
        # One whole search first, per binary: what a cancel cuts short.
        whole = []
        for p, sid in procs:
            t0 = time.perf_counter()
            send(p, {"id": 9, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}})
            until(p, lambda m: m.get("id") == 9 and "method" not in m)
            whole.append((time.perf_counter() - t0) * 1000)
            print(f"{p.args[0]}: whole search turn {whole[-1]:.0f} ms", flush=True)
        got = [[] for _ in bins]
        late = [0 for _ in bins]
        for r in range(rounds):
            for i, (p, sid) in enumerate(procs):
                rid = 100 + r
                send(p, {"id": rid, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}})
                until(p, lambda m: m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "tool_call")
                time.sleep(0.01)  # the search is under way
                t0 = time.perf_counter()
                send(p, {"method": "session/cancel", "params": {"sessionId": sid}})
                a = until(p, lambda m: m.get("id") == rid and "method" not in m)
                if a["result"]["stopReason"] != "cancelled":
                    late[i] += 1  # the search ended before the cancel: not counted
                    continue
                got[i].append((time.perf_counter() - t0) * 1000)
                # The script's text answer after the call was not asked for: a prompt takes it.
                send(p, {"id": 1000 + r, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "next"}]}})
                until(p, lambda m: m.get("id") == 1000 + r and "method" not in m)
        for p, _ in procs:
            p.stdin.close(); p.wait()
    print(f"cancel during search_text, {files} files, {rounds} rounds, load {open('/proc/loadavg').read().split()[:3]}")
    for i, b in enumerate(bins):
        g = sorted(got[i])
        print(f"[{i+1}] {b}: cancel → cancelled answer: median {statistics.median(g):.2f} ms, p90 {g[int(len(g) * 0.9)]:.2f} ms, max {g[-1]:.2f} ms ({len(g)} cancels; {late[i]} searches ended first)")

main()
