package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentd-dev/agentd/internal/test/testbin"
	"github.com/agentd-dev/agentd/jsonrpc"
)

// daemonBinary is agentd built static (CGO_ENABLED=0, as released) by internal/test/testbin, once
// for every test package that needs it.
func daemonBinary(t testing.TB) string {
	t.Helper()
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestMain also fails the package when a test leaves a goroutine behind: execMain runs
// in-process in the exec tests, and what it starts must be gone when it returns.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// daemon is a running agentd driven over its stdin and stdout.
type daemon struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	raw    *bytes.Buffer // every stdout byte, for the frames-only check
	stderr *bytes.Buffer
	waited chan error
}

type teeReader struct {
	r   io.Reader
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.mu.Lock()
	t.buf.Write(p[:n])
	t.mu.Unlock()
	return n, err
}

var rawMu sync.Mutex

func startDaemon(t testing.TB, env []string, args ...string) *daemon {
	t.Helper()
	cmd := exec.Command(daemonBinary(t), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=", "AGENTD_SECRET_STORE=file")
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{t: t, cmd: cmd, stdin: stdin, raw: &bytes.Buffer{}, stderr: &bytes.Buffer{}, waited: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{w: d.stderr}
	d.stdout = bufio.NewReader(teeReader{r: stdout, mu: &rawMu, buf: d.raw})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.waited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-d.waited
		if t.Failed() {
			t.Logf("stderr:\n%s", d.stderr.String())
		}
	})
	return d
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (d *daemon) send(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(d.stdin, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

// read returns the next frame from stdout.
func (d *daemon) read() map[string]any {
	d.t.Helper()
	body, err := jsonrpc.ReadFrame(d.stdout, nil, jsonrpc.MaxContentLength)
	if err != nil {
		d.t.Fatalf("reading a frame: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		d.t.Fatalf("frame is not JSON: %q", body)
	}
	return m
}

// response reads frames until the response to id.
func (d *daemon) response(id int) map[string]any {
	d.t.Helper()
	for {
		m := d.read()
		if v, ok := m["id"].(float64); ok && int(v) == id && m["method"] == nil {
			return m
		}
	}
}

func initParams() map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"processId": nil, "capabilities": map[string]any{}}}
}

// exitGuard bounds the wait for the daemon to exit. Only a hang guard: the exit tests assert that
// it exits, with which code, while what could hold it (an open stdin) is still there; how soon is
// not a wall time a loaded machine keeps, so it is not asserted.
const exitGuard = 20 * time.Second

// exit waits for the process and returns its exit code and how long it took.
func (d *daemon) exit(timeout time.Duration) (int, time.Duration) {
	d.t.Helper()
	start := time.Now()
	select {
	case <-d.waited:
		d.waited <- nil
	case <-time.After(timeout):
		d.t.Fatalf("agentd still running %v later", timeout)
	}
	return d.cmd.ProcessState.ExitCode(), time.Since(start)
}

// checkFramesOnly parses every byte agentd wrote to stdout as Content-Length frames of JSON.
func (d *daemon) checkFramesOnly() {
	d.t.Helper()
	rawMu.Lock()
	all := append([]byte(nil), d.raw.Bytes()...)
	rawMu.Unlock()
	r := bufio.NewReader(bytes.NewReader(all))
	n := 0
	for {
		body, err := jsonrpc.ReadFrame(r, nil, jsonrpc.MaxContentLength)
		if err == io.EOF {
			break
		}
		if err != nil {
			d.t.Fatalf("stdout holds something that is not a frame after %d frames: %v\n%q", n, err, all)
		}
		if !json.Valid(body) {
			d.t.Fatalf("frame %d is not JSON: %q", n, body)
		}
		n++
	}
	if n == 0 {
		d.t.Fatal("no frames on stdout")
	}
}

func TestDaemonInitializeAndEOF(t *testing.T) {
	d := startDaemon(t, []string{"AGENTD_LOG=debug"}, "--stdio")
	d.send(initParams())
	res := d.response(1)
	r, _ := res["result"].(map[string]any)
	if r["serverInfo"].(map[string]any)["name"] != "agentd" {
		t.Fatalf("initialize = %v", res)
	}
	d.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	d.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "agent/providers/list"})
	d.response(2)
	d.stdin.Close()
	if code, _ := d.exit(exitGuard); code != 1 {
		t.Errorf("exit code after EOF = %d, want 1", code)
	}
	d.checkFramesOnly()
	if !strings.Contains(d.stderr.String(), `"msg":"end of input; exiting"`) {
		t.Errorf("stderr lacks the log lines:\n%s", d.stderr.String())
	}
}

func TestDaemonShutdownExitWhileStdinOpen(t *testing.T) {
	d := startDaemon(t, nil, "--stdio", "--clientProcessId=1") // what vscode-languageclient may append
	d.send(initParams())
	d.response(1)
	d.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
	d.response(2)
	d.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	// stdin stays open, as an editor keeps it: the daemon must still leave.
	if code, _ := d.exit(exitGuard); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	d.checkFramesOnly()
}

func TestDaemonExitWithoutShutdown(t *testing.T) {
	d := startDaemon(t, nil, "serve")
	d.send(initParams())
	d.response(1)
	d.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	if code, _ := d.exit(exitGuard); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

func TestDaemonMalformedFrame(t *testing.T) {
	d := startDaemon(t, nil)
	d.send(initParams())
	d.response(1)
	io.WriteString(d.stdin, "Content-Length: seven\r\n\r\n{oops!}")
	if code, _ := d.exit(exitGuard); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !strings.Contains(d.stderr.String(), "malformed frame") {
		t.Errorf("stderr does not say why:\n%s", d.stderr.String())
	}
	d.checkFramesOnly()
}

// A frame whose length is right but whose body is not JSON is answered -32700 (id null) and the
// daemon serves on: only a framing error, which cannot be resynchronised, ends it.
func TestDaemonNotJSONBodyKeepsServing(t *testing.T) {
	d := startDaemon(t, nil)
	d.send(initParams())
	d.response(1)
	io.WriteString(d.stdin, "Content-Length: 7\r\n\r\n{oops!}")
	m := d.read()
	e, _ := m["error"].(map[string]any)
	if id, present := m["id"]; !present || id != nil || e == nil || e["code"] != float64(-32700) {
		t.Fatalf("answer to a body that is not JSON = %v, want -32700 with id null", m)
	}
	d.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "agent/providers/list"})
	if res := d.response(2); res["error"] != nil {
		t.Fatalf("after the bad body: %v", res)
	}
	d.send(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
	d.response(3)
	d.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	if code, _ := d.exit(exitGuard); code != 0 {
		t.Errorf("exit code %d after shutdown and exit, want 0", code)
	}
	d.checkFramesOnly()
}

func TestDaemonNeverLogsKeys(t *testing.T) {
	d := startDaemon(t, []string{"AGENTD_LOG=debug", "OPENAI_API_KEY=sk-envsecret-0123456789"})
	d.send(initParams())
	d.response(1)
	d.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "agent/providers/set", "params": map[string]any{
		"providerId": "gw", "apiType": "openai", "baseUrl": "https://gw.example/v1", "headers": map[string]string{"Authorization": "Bearer sk-headersecret-0123456789"}}})
	res := d.response(2)
	if res["error"] != nil {
		t.Fatalf("providers/set: %v", res)
	}
	d.send(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "agent/providers/list"})
	d.response(3)
	d.stdin.Close()
	d.exit(exitGuard)
	rawMu.Lock()
	out := d.raw.String()
	rawMu.Unlock()
	for _, secret := range []string{"sk-envsecret", "sk-headersecret"} {
		if strings.Contains(d.stderr.String(), secret) {
			t.Errorf("%s in the log", secret)
		}
		if strings.Contains(out, secret) {
			t.Errorf("%s on the wire", secret)
		}
	}
}

func TestDaemonFlags(t *testing.T) {
	bin := daemonBinary(t)
	for _, arg := range []string{"--version", "version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil || !strings.HasPrefix(string(out), "agentd ") {
			t.Errorf("%s: stdout %q, %v", arg, out, err)
		}
	}
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "-log-file FILE") {
		t.Errorf("--help: %q %v", out, err)
	}
	err = exec.Command(bin, "bogus").Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("unknown command: %v", err)
	}
	err = exec.Command(bin, "--log-level", "loud").Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("bad log level: %v", err)
	}
}

func TestDaemonLogFile(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "agentd.log")
	d := startDaemon(t, nil, "--log-file", logFile, "--log-level", "debug")
	d.send(initParams())
	d.response(1)
	d.stdin.Close()
	d.exit(exitGuard)
	b, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(b), `"msg":"initialized"`) {
		t.Fatalf("log file: %q %v", b, err)
	}
	if strings.Contains(d.stderr.String(), `"msg":"initialized"`) {
		t.Error("logged to stderr despite --log-file")
	}
}

// BenchmarkSpawnToInitialize measures what an editor waits for: process start to the
// initialize answer. It reports the median and the resident set size once idle.
func BenchmarkSpawnToInitialize(b *testing.B) {
	daemonBinary(b)
	var times, cpu []time.Duration
	var rss int
	for b.Loop() {
		start := time.Now()
		d := startDaemon(b, nil)
		d.send(initParams())
		d.response(1)
		times = append(times, time.Since(start))
		if rss == 0 {
			rss = vmRSS(d.cmd.Process.Pid)
		}
		d.stdin.Close()
		d.exit(5 * time.Second)
		cpu = append(cpu, d.cmd.ProcessState.UserTime()+d.cmd.ProcessState.SystemTime())
	}
	median := func(ds []time.Duration) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(times), "median-ms")
	// CPU time of the whole process life (start, initialize, exit): steadier than wall time
	// on a loaded machine.
	b.ReportMetric(median(cpu), "median-cpu-ms")
	if rss > 0 {
		b.ReportMetric(float64(rss)/1024, "idle-RSS-MiB")
	}
}

// vmRSS reads VmRSS (KiB) from /proc; 0 where there is no /proc.
func vmRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// A key stored with agentd key set reaches the provider of that origin only.
func TestKeyStoreCommand(t *testing.T) {
	bin := daemonBinary(t)
	cfg := t.TempDir()
	env := append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "OPENAI_API_KEY=", "AGENTD_SECRET_STORE=file")
	cmd := exec.Command(bin, "key", "set", "https://gw.example/v1")
	cmd.Env = env
	cmd.Stdin = strings.NewReader("sk-stored-0123456789\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("key set: %v %s", err, out)
	}
	fi, err := os.Stat(filepath.Join(cfg, "agentd", "secrets.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("store: %v %v", fi, err)
	}
	cmd = exec.Command(bin, "key", "set", "http://gw.example/v1")
	cmd.Env = env
	cmd.Stdin = strings.NewReader("k\n")
	if err := cmd.Run(); err == nil {
		t.Fatal("a key for plain http to a remote host was accepted")
	}

	d := startDaemon(t, []string{"XDG_CONFIG_HOME=" + cfg})
	d.send(initParams())
	d.response(1)
	for i, p := range []map[string]any{
		{"providerId": "gw", "apiType": "openai", "baseUrl": "https://gw.example/v1"},
		{"providerId": "other", "apiType": "openai", "baseUrl": "https://other.example/v1"},
	} {
		d.send(map[string]any{"jsonrpc": "2.0", "id": 10 + i, "method": "agent/providers/set", "params": p})
		d.response(10 + i)
	}
	d.send(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "agent/providers/list"})
	res := d.response(3)
	status := map[string]any{}
	for _, p := range res["result"].(map[string]any)["providers"].([]any) {
		m := p.(map[string]any)
		status[m["providerId"].(string)] = m["keyStatus"]
	}
	if status["gw"] != "set" || status["other"] != "missing" {
		t.Fatalf("key status = %v", status)
	}
}

// TestDaemonPromptEndToEnd runs a whole turn through the built daemon: the user settings name a
// replay provider, the editor answers a read through agent/fs/read_text_file, the turn streams
// updates and answers end_turn, and --trace writes the run's trace.
func TestDaemonPromptEndToEnd(t *testing.T) {
	home := t.TempDir()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(home, "script.json")
	os.WriteFile(script, []byte(`{"responses":[
		{"text":"Reading it.","toolCalls":[{"id":"c1","name":"read_file","args":{"path":"a.txt"}}]},
		{"text":"It says: from the buffer."}]}`), 0o644)
	os.MkdirAll(filepath.Join(home, "config", "agentd"), 0o700)
	os.WriteFile(filepath.Join(home, "config", "agentd", "config.json"),
		[]byte(`{"provider":"r","providers":{"r":{"apiType":"replay","baseUrl":"`+script+`"}}}`), 0o600)
	trace := filepath.Join(home, "trace.jsonl")
	d := startDaemon(t, []string{"XDG_CONFIG_HOME=" + filepath.Join(home, "config")}, "--trace", trace)
	d.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"capabilities": map[string]any{"workspace": map[string]any{"applyEdit": true}},
		"initializationOptions": map[string]any{"agent": map[string]any{"protocolVersion": 1,
			"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true}}}}}})
	if r := d.response(1); r["error"] != nil {
		t.Fatalf("initialize: %v", r)
	}
	d.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "agent/session/new", "params": map[string]any{"cwd": root}})
	r := d.response(2)
	if r["error"] != nil {
		t.Fatalf("session/new: %v", r)
	}
	sid := r["result"].(map[string]any)["sessionId"].(string)
	d.send(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "agent/session/prompt", "params": map[string]any{
		"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "what is in a.txt?"}}}})
	var text strings.Builder
	var read bool
	for {
		m := d.read()
		switch {
		case m["method"] == "agent/fs/read_text_file":
			read = true
			d.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"content": "from the buffer\n"}})
		case m["method"] == "agent/session/update":
			u := m["params"].(map[string]any)["update"].(map[string]any)
			if u["sessionUpdate"] == "agent_message_chunk" {
				text.WriteString(u["content"].(map[string]any)["text"].(string))
			}
		case m["method"] != nil && m["id"] != nil:
			d.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "error": map[string]any{"code": -32601, "message": "not here"}})
		case m["id"] == float64(3):
			if m["error"] != nil {
				t.Fatalf("prompt: %v", m)
			}
			if sr := m["result"].(map[string]any)["stopReason"]; sr != "end_turn" {
				t.Fatalf("stopReason %v", sr)
			}
			if !read {
				t.Error("the file was not read through the editor")
			}
			if !strings.Contains(text.String(), "It says: from the buffer.") {
				t.Errorf("message text %q", text.String())
			}
			d.stdin.Close()
			d.exit(exitGuard)
			d.checkFramesOnly()
			if fi, err := os.Stat(trace); err != nil || fi.Size() == 0 {
				t.Errorf("--trace wrote nothing: %v", err)
			}
			return
		}
	}
}
