#!/usr/bin/env python3
"""Where a start's page faults go: runs each binary on one `initialize` frame (LSP framing, or
ACP's NDJSON with --acp) under `perf record -g -c 1 -e page-faults -d`, in a fresh HOME and XDG
tree, and classifies every fault by the call chain that explains it (a package's init, stack
growth, the initialize handler's parts, ...). Prints the mean per cause over the runs, per
binary. On a VM with shadow page tables a first touch costs 12-20 us, so this is where start-up
time goes (docs/benchmarks.md, "Start-up, fourth pass").

usage: python3 bench/start_faults.py [--acp] [--runs N] BIN [BIN...]
"""
import collections, json, os, re, subprocess, sys, tempfile

def frame(acp):
    if acp:
        p = {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}
        return (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": p}) + "\n").encode()
    p = {"processId": os.getpid(), "capabilities": {}, "initializationOptions": {"agent": {
        "protocolVersion": 1, "clientInfo": {"name": "e2e"}, "clientCapabilities": {}, "settings": None}}}
    b = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": p}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(b) + b

NAMED = [("golang.org/x/net/html", "init: x/net/html"),
         ("jsonschema-go", "init: jsonschema-go"), ("encoding/gob", "init: encoding/gob"), ("yaml", "init: yaml/v3"),
         ("encoding/xml", "init: encoding/xml"),
         ("github.com/agentd-dev", "init: agentd's own packages")]

def cause(fr):
    s = set(fr)
    if "runtime.newstack" in s or "runtime.copystack" in s:
        return "stack growth (copies and their pclntab reads)"
    if "runtime.doInit1" in s:
        i = fr.index("runtime.doInit1")
        pkg = re.sub(r"\.(map\.)?init(\.\d+)?(\.func\d+)?$", "", fr[i - 1] if i > 0 else "?")
        if pkg.startswith("runtime"):
            return "runtime start"
        for k, name in NAMED:
            if k in pkg:
                return name
        return "init: other packages"
    for needle, name in [("rpc.decodeParams", "initialize: params decode"), ("config.decodeMerge", "settings merge through JSON"),
                         ("config.decodeJSON", "settings merge through JSON"), ("sendResponse", "initialize: answer encode"),
                         ("Codec.Marshal", "initialize: answer encode"), ("ProviderSource).List", "initialize: provider list"),
                         ("rpc.(*Server).initialize", "initialize: other"), ("rpc.(*Server).acpInitialize", "initialize: other")]:
        if any(needle in f for f in fr):
            return name
    if "main.main" in s:
        return "main: other (logger, settings, server set-up, exit)"
    if "runtime.main" in s:
        return "runtime start"
    if any(f.startswith("runtime.goexit") for f in fr):
        return "other goroutines (reader, signals, GC workers)"
    return "runtime start"

def record(binary, acp, home):
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home + "/config", XDG_STATE_HOME=home + "/state",
               XDG_DATA_HOME=home + "/data", XDG_CACHE_HOME=home + "/cache",
               ANTHROPIC_API_KEY="", OPENAI_API_KEY="", GEMINI_API_KEY="")
    out = os.path.join(home, "perf.data")
    args = [binary] + (["acp"] if acp else [])
    subprocess.run(["perf", "record", "-q", "-g", "-c", "1", "-e", "page-faults", "-d", "-o", out, "--"] + args,
                   input=frame(acp), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # LSP: exit 1 without shutdown
    text = subprocess.run(["perf", "script", "-i", out, "-F", "ip,sym", "--no-demangle"],
                          capture_output=True, text=True).stdout
    counts = collections.Counter()
    for sample in text.strip().split("\n\n"):
        fr = [l.strip().split(None, 1)[1] if len(l.strip().split(None, 1)) > 1 else "?"
              for l in sample.strip().split("\n") if l.strip()]
        counts[cause(fr)] += 1
    return counts

def main():
    argv, acp, runs = sys.argv[1:], False, 8
    bins = []
    while argv:
        a = argv.pop(0)
        if a == "--acp":
            acp = True
        elif a == "--runs":
            runs = int(argv.pop(0))
        else:
            bins.append(a)
    if not bins:
        raise SystemExit(__doc__)
    totals = {b: collections.Counter() for b in bins}
    for _ in range(runs):
        for b in bins:  # interleaved
            with tempfile.TemporaryDirectory(prefix="agentd-faults-") as home:
                totals[b] += record(b, acp, home)
    causes = sorted({c for t in totals.values() for c in t}, key=lambda c: -max(t[c] for t in totals.values()))
    print("%-52s" % "cause (mean page faults of %d runs)" % runs + "".join("%12s" % os.path.basename(b)[:11] for b in bins))
    for c in causes:
        print("%-52s" % c + "".join("%12.1f" % (totals[b][c] / runs) for b in bins))
    print("%-52s" % "total" + "".join("%12.1f" % (sum(totals[b].values()) / runs) for b in bins))

if __name__ == "__main__":
    main()
