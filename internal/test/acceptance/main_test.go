// Package acceptance_test holds agentd to the wire contract (../shared/PROTOCOL.md) section by
// section. Every test drives the real binary, built by internal/test/testbin (once for every package that needs it), over its stdin and stdout:
// the peer is editorbridge/fakeeditor (or raw frames where the test is about framing and
// lifecycle) and the model is the replay provider or internal/test/fakemodel on 127.0.0.1. Each
// process gets its own HOME, XDG_CONFIG_HOME and XDG_STATE_HOME.
package acceptance_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/testbin"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
)

var binPath string

func TestMain(m *testing.M) {
	if base := os.Getenv(fimAnchorEnv); base != "" {
		os.Exit(runFIMAnchor(base)) // this process is TestInlineCompletionBenchmark's anchor
	}
	// AGENTD_ACCEPTANCE_BIN holds another build (a release, a cross-check) to the contract.
	if bin := os.Getenv("AGENTD_ACCEPTANCE_BIN"); bin != "" {
		binPath = bin
		os.Exit(m.Run())
	}
	var err error
	if binPath, err = testbin.Agentd(raceBuild); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// syncBuffer is a bytes.Buffer safe for one writer and many readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

func (b *syncBuffer) String() string { return string(b.Bytes()) }

// proc is one running agentd.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Reader // tees into raw
	raw    *syncBuffer
	stderr *syncBuffer
	exited chan struct{}
	// state is the XDG_STATE_HOME, shared by a later process that loads the sessions.
	state string
}

// startProc starts agentd with isolated HOME and XDG directories. state, when not "", is the
// XDG_STATE_HOME to use (a second process that must see the first one's sessions).
func startProc(t *testing.T, state string, env ...string) *proc {
	t.Helper()
	home := t.TempDir()
	config := filepath.Join(home, "config")
	if state == "" {
		state = filepath.Join(home, "state")
	} else {
		// A later process of the same user: it shares the first one's config dir too, where
		// the key that signs the remembered grants lives (session/project.go).
		config = filepath.Join(filepath.Dir(state), "config")
	}
	cmd := exec.Command(binPath)
	cmd.Env = append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+config, "XDG_STATE_HOME="+state,
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=", "AGENTD_LOG=debug", "AGENTD_SECRET_STORE=file")
	if raceBuild {
		// A -race binary sleeps a second before exiting by default, which the exit-time
		// promises would blame on agentd.
		cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0")
	}
	cmd.Env = append(cmd.Env, env...)
	p := &proc{t: t, cmd: cmd, raw: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{}), state: state}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.stdout = io.TeeReader(out, p.raw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-p.exited
			t.Error("agentd did not exit within 5s of its stdin closing")
		}
		p.checkFramesOnly()
		if strings.Contains(p.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("agentd (built with -race) reported a data race:\n%s", tail(p.stderr.String(), 6000))
		}
		if t.Failed() {
			t.Logf("agentd stderr (tail):\n%s", tail(p.stderr.String(), 8000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// waitExit waits for the process to end and returns its exit code and how long that took.
func (p *proc) waitExit(timeout time.Duration) (int, time.Duration) {
	p.t.Helper()
	start := time.Now()
	select {
	case <-p.exited:
	case <-time.After(timeout):
		p.t.Fatalf("agentd still running %v later", timeout)
	}
	return p.cmd.ProcessState.ExitCode(), time.Since(start)
}

// checkFramesOnly holds every byte written to stdout so far to Content-Length frames of JSON.
// The stdout tee only sees what was read, so the check runs once the reader has drained it.
func (p *proc) checkFramesOnly() {
	p.t.Helper()
	all := p.raw.Bytes()
	r := bufio.NewReader(bytes.NewReader(all))
	for n := 0; ; n++ {
		body, err := jsonrpc.ReadFrame(r, nil, jsonrpc.MaxContentLength)
		if err == io.EOF {
			return
		}
		if err != nil {
			// A frame cut by the end of what the reader consumed is not a violation.
			if err == io.ErrUnexpectedEOF {
				return
			}
			p.t.Errorf("stdout holds something that is not a Content-Length frame after %d frames: %v\n%q", n, err, tail(string(all), 2000))
			return
		}
		if !json.Valid(body) {
			p.t.Errorf("frame %d on stdout is not JSON: %q", n, body)
			return
		}
	}
}

// ---- raw framing, for lifecycle tests ----

func (p *proc) send(v any) {
	p.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := fmt.Fprintf(p.stdin, "Content-Length: %d\r\n\r\n%s", len(b), b); err != nil {
		p.t.Fatalf("writing to agentd: %v", err)
	}
}

// frames reads stdout frames on a goroutine into a channel (raw lifecycle tests only).
func (p *proc) frames() <-chan map[string]any {
	ch := make(chan map[string]any, 64)
	go func() {
		defer close(ch)
		r := bufio.NewReader(p.stdout)
		for {
			body, err := jsonrpc.ReadFrame(r, nil, jsonrpc.MaxContentLength)
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(body, &m) != nil {
				continue
			}
			ch <- m
		}
	}()
	return ch
}

// response waits for the response with id, skipping everything else.
func response(t *testing.T, frames <-chan map[string]any, id int) map[string]any {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-frames:
			if !ok {
				t.Fatalf("stdout closed before the response to %d", id)
			}
			if v, ok := m["id"].(float64); ok && int(v) == id && m["method"] == nil {
				return m
			}
		case <-deadline:
			t.Fatalf("no response to request %d within 10s", id)
		}
	}
}

func request(id int, method string, params any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

func notification(method string, params any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

// ---- the fake editor on the binary ----

// stdioRW joins the child's stdout (read) and stdin (write) for the fake editor.
type stdioRW struct {
	r io.Reader
	w io.WriteCloser
}

func (s stdioRW) Read(b []byte) (int, error)  { return s.r.Read(b) }
func (s stdioRW) Write(b []byte) (int, error) { return s.w.Write(b) }
func (s stdioRW) Close() error                { return s.w.Close() }

// env is an initialized agentd with a fake editor and a workspace root.
type env struct {
	t    *testing.T
	p    *proc
	ed   *fakeeditor.Editor
	root string
	init json.RawMessage
}

// realDir is a temp dir with symlinks resolved (macOS /var → /private/var).
func realDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// start runs agentd, connects a fake editor with opts and initializes it on a fresh root.
func start(t *testing.T, opts fakeeditor.Options, settings json.RawMessage) *env {
	return startIn(t, opts, settings, "", realDir(t))
}

func startIn(t *testing.T, opts fakeeditor.Options, settings json.RawMessage, state, root string, procEnv ...string) *env {
	t.Helper()
	p := startProc(t, state, procEnv...)
	opts.Settings = settings
	if opts.Timeout == 0 {
		opts.Timeout = 15 * time.Second
	}
	ed := fakeeditor.New(t, stdioRW{r: p.stdout, w: p.stdin}, opts)
	t.Cleanup(func() {
		replayed := map[string]bool{}
		for _, f := range parseLog(ed.Messages(), "editor → agentd ") {
			if f.Method == protocol.MethodSessionLoad {
				var p protocol.SessionLoadParams
				json.Unmarshal(f.Params, &p)
				replayed[p.SessionID] = true
			}
		}
		for _, v := range checkInvariants(parseLog(ed.Messages(), "agentd → editor "), replayed) {
			t.Errorf("contract invariant: %s", v)
		}
	})
	res, err := ed.Initialize(ctxT(t), root)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return &env{t: t, p: p, ed: ed, root: root, init: res}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (e *env) newSession() string {
	e.t.Helper()
	res, err := e.ed.NewSession(ctxT(e.t), e.root)
	if err != nil {
		e.t.Fatalf("agent/session/new: %v", err)
	}
	return res.SessionID
}

func (e *env) prompt(sid, text string) protocol.PromptResult {
	e.t.Helper()
	res, err := e.ed.Prompt(ctxT(e.t), sid, text)
	if err != nil {
		e.t.Fatalf("agent/session/prompt: %v", err)
	}
	return res
}

func (e *env) setMode(sid, mode string) {
	e.t.Helper()
	var res protocol.SetConfigOptionResult
	if err := e.ed.Call(ctxT(e.t), protocol.MethodSessionSetConfigOption,
		protocol.SetConfigOptionParams{SessionID: sid, ConfigID: "mode", Value: mode}, &res); err != nil {
		e.t.Fatalf("set mode %s: %v", mode, err)
	}
}

// writeFile writes a file under the root and returns its absolute path.
func (e *env) writeFile(rel, text string) string {
	e.t.Helper()
	p := filepath.Join(e.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// replay writes a replay script and returns settings that make it the default provider.
func replay(t *testing.T, script any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "replay.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := json.Marshal(map[string]any{
		"provider":  "r",
		"providers": map[string]any{"r": map[string]any{"apiType": "replay", "baseUrl": path, "model": "replay-model"}},
	})
	return s
}

// responses is shorthand for a replay script of these responses.
func responses(rs ...map[string]any) map[string]any {
	return map[string]any{"title": "Acceptance", "summary": "Summary.", "responses": rs}
}

// frame is one message agentd sent, as raw JSON.
type frame struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// sent returns every message agentd sent so far, from the fake editor's log, as raw JSON.
func (e *env) sent() []frame {
	return parseLog(e.ed.Messages(), "agentd → editor ")
}

// received returns every message the editor sent.
func (e *env) received() []frame {
	return parseLog(e.ed.Messages(), "editor → agentd ")
}

func parseLog(lines []string, prefix string) []frame {
	var out []frame
	for _, l := range lines {
		body, ok := strings.CutPrefix(l, prefix)
		if !ok {
			continue
		}
		var f frame
		if json.Unmarshal([]byte(body), &f) == nil {
			out = append(out, f)
		}
	}
	return out
}

// rawUpdates returns the raw update objects of a session, in order.
func (e *env) rawUpdates(sid string) []map[string]any {
	var out []map[string]any
	for _, f := range e.sent() {
		if f.Method != protocol.MethodSessionUpdate {
			continue
		}
		var n struct {
			SessionID string         `json:"sessionId"`
			Update    map[string]any `json:"update"`
		}
		if json.Unmarshal(f.Params, &n) == nil && n.SessionID == sid {
			out = append(out, n.Update)
		}
	}
	return out
}

// kinds filters updates by sessionUpdate kind.
func kinds(us []map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, u := range us {
		if u["sessionUpdate"] == kind {
			out = append(out, u)
		}
	}
	return out
}

// callError runs a request that must fail and returns its JSON-RPC code and message.
func (e *env) callError(method string, params any) (int, string) {
	e.t.Helper()
	var res json.RawMessage
	err := e.ed.Call(ctxT(e.t), method, params, &res)
	if err == nil {
		e.t.Fatalf("%s %v succeeded with %s; want an error", method, params, res)
	}
	return errorCode(e.t, err)
}

// errorCode extracts the JSON-RPC error code and message of err.
func errorCode(t *testing.T, err error) (int, string) {
	t.Helper()
	var je *jsonrpc.WireError
	if !errors.As(err, &je) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	return int(je.Code), je.Message
}

// obj walks a decoded JSON object by keys.
func obj(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func mustJSON(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, raw)
	}
	return m
}
