# drive.py CMD...: start CMD (agentd, or a wrapper such as `perf record ... agentd`) in a scratch
# HOME, run initialize (with the settings an editor sends, as bench/e2e does), initialized and
# agent/session/new over the LSP door, wait 1 s, print the child's pid, and close its input at the
# first line on stdin.
import json, os, subprocess, sys, time, tempfile
home = tempfile.mkdtemp()
root = tempfile.mkdtemp()
env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home+"/c", XDG_STATE_HOME=home+"/s", XDG_DATA_HOME=home+"/d", XDG_CACHE_HOME=home+"/k",
           ANTHROPIC_API_KEY="", OPENAI_API_KEY="", GEMINI_API_KEY="")
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
def send(o):
    b = json.dumps(o).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b); p.stdin.flush()
def recv_id(i):
    while True:
        h = b""
        while not h.endswith(b"\r\n\r\n"):
            c = p.stdout.read(1)
            if not c: raise SystemExit("eof")
            h += c
        n = int([l for l in h.split(b"\r\n") if l.lower().startswith(b"content-length")][0].split(b":")[1])
        m = json.loads(p.stdout.read(n))
        if m.get("id") == i and "method" not in m: return m
settings = {"provider": "fm", "providers": {"fm": {"apiType": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}}}
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":os.getpid(),"capabilities":{},"initializationOptions":{"agent":{"protocolVersion":1,"clientInfo":{"name":"e2e"},"clientCapabilities":{},"settings":settings}}}})
recv_id(1)
send({"jsonrpc":"2.0","method":"initialized","params":{}})
send({"jsonrpc":"2.0","id":2,"method":"agent/session/new","params":{"cwd":root,"mcpServers":[]}})
r = recv_id(2)
time.sleep(1)
print(p.pid, flush=True)
sys.stdin.readline()
p.stdin.close(); p.wait()
