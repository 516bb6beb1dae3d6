#!/usr/bin/env python3
"""ACP door start-up: spawn `agentd acp` → initialize answered (wall), idle RSS after initialize,
and session/cancel → the cancelled prompt's answer, for one agentd binary.

usage: python3 bench/acp.py [AGENTD_BIN] [SPAWNS]   (default: a CGO_ENABLED=0 build in /tmp)
Each spawn gets its own HOME and XDG directories; the model is a replay script (no network).
"""
import json, os, statistics, subprocess, sys, tempfile, time

def build():
    out = os.path.join(tempfile.gettempdir(), "agentd-bench-acp")
    subprocess.run(["go", "build", "-trimpath", "-o", out, "./cmd/agentd"], check=True,
                   env={**os.environ, "CGO_ENABLED": "0"})
    return out

def env_for(home):
    return {**os.environ, "HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_STATE_HOME": home + "/state",
            "XDG_CACHE_HOME": home + "/cache", "XDG_DATA_HOME": home + "/data"}

def send(p, msg):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", **msg}) + "\n").encode()); p.stdin.flush()

def answer(p, id_):
    while True:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("agentd ended early")
        m = json.loads(line)
        if m.get("id") == id_ and "method" not in m:
            return m

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])

def main():
    bin_ = sys.argv[1] if len(sys.argv) > 1 else build()
    spawns = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    init = {"id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}
    walls, rss = [], []
    for _ in range(spawns):
        with tempfile.TemporaryDirectory() as home:
            t0 = time.perf_counter()
            p = subprocess.Popen([bin_, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, env=env_for(home), cwd=home)
            send(p, init); answer(p, 1)
            walls.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.05)
            rss.append(rss_kib(p.pid) / 1024)
            p.stdin.close(); p.wait()
    # cancel → answer, against a model that would stream for a minute
    cancels = []
    with tempfile.TemporaryDirectory() as home:
        os.makedirs(home + "/config/agentd")
        script = {"title": "B", "responses": [{"text": "slow " * 400, "chunkDelayMs": 150, "stopReason": "end_turn"}] * 20}
        with open(home + "/replay.json", "w") as f: json.dump(script, f)
        with open(home + "/config/agentd/config.json", "w") as f:
            json.dump({"provider": "r", "providers": {"r": {"apiType": "replay", "baseUrl": home + "/replay.json", "model": "m"}}}, f)
        p = subprocess.Popen([bin_, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env_for(home), cwd=home)
        send(p, init); answer(p, 1)
        send(p, {"id": 2, "method": "session/new", "params": {"cwd": home, "mcpServers": []}})
        sid = answer(p, 2)["result"]["sessionId"]
        for i in range(10):
            rid = 100 + i
            send(p, {"id": rid, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}})
            while True:
                m = json.loads(p.stdout.readline())
                if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk":
                    break
            t0 = time.perf_counter()
            send(p, {"method": "session/cancel", "params": {"sessionId": sid}})
            a = answer(p, rid)
            cancels.append((time.perf_counter() - t0) * 1000)
            assert a["result"]["stopReason"] == "cancelled", a
        p.stdin.close(); p.wait()
    print(f"agentd acp ({bin_}), {spawns} spawns")
    print(f"spawn → initialize answered: median {statistics.median(walls):.2f} ms, p90 {sorted(walls)[int(len(walls)*0.9)-1]:.2f} ms")
    print(f"idle RSS after initialize: median {statistics.median(rss):.1f} MiB, max {max(rss):.1f} MiB")
    print(f"session/cancel → cancelled answer: median {statistics.median(cancels):.2f} ms, max {max(cancels):.2f} ms ({len(cancels)} turns)")

main()
