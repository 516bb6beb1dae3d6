// Command e2e measures agentd end to end, the way an editor drives it: the real binary over its
// stdin and stdout (LSP-framed JSON-RPC), with internal/test/fakemodel as an OpenAI-compatible model
// on 127.0.0.1. It reports, per binary:
//
//   - spawn → initialize: process start to the initialize answer (median over -spawns);
//   - idle RSS: VmRSS once a session exists and nothing runs (the median of -idle-runs starts,
//     each with the binary dropped from the page cache first), and what the resident pages are;
//   - a two-call turn (the model asks for read_file, then answers text), cold (the first turn of
//     a fresh process) and warm (the median of -turns later turns, each in a new session of the
//     same process), wall and CPU;
//   - CPU per streamed delta: a turn of -deltas one-character text deltas, less a short turn,
//     -delta-rounds times per binary, the binaries' turns alternating;
//   - bytes sent per streamed argument: the notifications about one create_file call whose
//     -arg-kb KB content streams in 256-byte pieces, divided by the argument's size;
//   - find_symbol on a generated tree of -files files, with universal-ctags on PATH and with the
//     built-in scanner (PATH without ctags): the turn's wall, peak RSS (VmHWM), RSS after.
//
// CPU is the child's own: the sum of sum_exec_runtime over /proc/PID/task/*/schedstat
// (nanoseconds, every thread), read before and after; so it is Linux only. The driver's and the
// fake model's CPU are not counted. With several binaries (-bin a,b), spawns alternate between
// them and each other figure is measured for each in turn, so one run compares them side by side.
//
// With -door acp it drives `agentd acp` instead: one JSON message per line, ACP's method names,
// the settings in the user file (ACP has no initializationOptions). With -editor-fs the driver
// declares the editor's fs.readTextFile and answers read_text_file from the disk, so that reads go
// through the reverse request (by default it declares nothing and agentd reads the disk).
//
// Two baselines run beside the binaries, interleaved with them, so that the figures say what the
// machine charges for the exchanges themselves and what is agentd's: bench/e2e/baseline (answers
// initialize and nothing else) under spawn → initialize, and bench/e2e/baselineturn (a minimal Go
// agent: the same exchanges as the two-call turn and the per-delta turn, no engine) under the
// turn, per-delta and idle figures (-baseline=false leaves the second out). A binary's two-call
// turn overhead is what its warm turn takes above the baseline's, on the same door in the same
// run: the median, over the warm rounds, of its turn's wall (and CPU) less the baseline's turn of
// the same round.
//
// Usage: go run ./bench/e2e [-bin PATH[,PATH]] [-door lsp|acp] [-only spawn,idle,turn,delta,arg,symbol] [-editor-fs] [-baseline=false]
//
// Without -bin it builds ./cmd/agentd with CGO_ENABLED=0 (as released) into a temporary
// directory. None of this is a test: the figures go to docs/benchmarks.md.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/internal/test/fakemodel"

	"github.com/agentd-dev/agentd/bench/e2e/internal/frame"
)

var (
	binFlag     = flag.String("bin", "", "agentd binaries to measure, comma-separated (default: build ./cmd/agentd static)")
	onlyFlag    = flag.String("only", "spawn,idle,turn,delta,arg,symbol", "measurements to run (also: kill9, the fault run)")
	spawns      = flag.Int("spawns", 50, "spawns per binary for spawn → initialize")
	idleRuns    = flag.Int("idle-runs", 5, "starts per binary for the idle RSS (median)")
	turns       = flag.Int("turns", 30, "warm turns per binary")
	colds       = flag.Int("colds", 5, "fresh processes per binary for the cold turn")
	deltas      = flag.Int("deltas", 20000, "text deltas in the per-delta turn")
	deltaRounds = flag.Int("delta-rounds", 2, "long turns per binary in the per-delta run (they alternate between the binaries)")
	argKB       = flag.Int("arg-kb", 64, "size of the streamed create_file argument, KB")
	argDelayMs  = flag.Int("arg-delay-ms", 16, "pause between 256-byte argument pieces")
	files       = flag.Int("files", 20000, "files in the find_symbol tree")
	perfOut     = flag.String("perf", "", "record the warm turns (and the per-delta run's long turns, into FILE.delta.BINARY) with `perf record -g` into this file (Linux perf on PATH)")
	every       = flag.Int("symbol-every", 20, "one file in this many defines the find_symbol query")
	perfCold    = flag.String("perf-cold", "", "record each cold turn alone with `perf record -g` into FILE.BINARY.N (the cold figures then include perf's cost)")
	doorFlag    = flag.String("door", "lsp", "the door to drive: lsp (agentd, LSP framing) or acp (agentd acp, NDJSON)")
	baseFlag    = flag.Bool("baseline", true, "measure bench/e2e/baselineturn (a minimal Go agent) beside the binaries in the turn, delta and idle runs")
	editorFS    = flag.Bool("editor-fs", false, "declare the editor's fs.readTextFile capability and answer read_text_file from the disk (by default agentd reads the disk itself)")
)

// turnBase is the built bench/e2e/baselineturn, or "" without -baseline.
var turnBase string

func main() {
	flag.Parse()
	if runtime.GOOS != "linux" {
		fail(errors.New("the driver reads /proc: Linux only"))
	}
	bins := strings.Split(*binFlag, ",")
	if *binFlag == "" {
		b, err := build()
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(filepath.Dir(b))
		bins = []string{b}
	}
	only := map[string]bool{}
	for _, o := range strings.Split(*onlyFlag, ",") {
		only[strings.TrimSpace(o)] = true
	}
	fmt.Printf("agentd end to end: %s, %d CPUs, load %s\n", runtime.Version(), runtime.NumCPU(), loadavg())
	for i, b := range bins {
		fmt.Printf("binary %d: %s\n", i+1, b)
	}
	if *baseFlag && (only["turn"] || only["delta"] || only["idle"]) {
		b, err := buildPkg("github.com/agentd-dev/agentd/bench/e2e/baselineturn", "baselineturn")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(filepath.Dir(b))
		turnBase = b
	}
	if only["spawn"] {
		spawnBench(bins)
	}
	if only["turn"] {
		run("turn", func() error { return turnBench(bins) })
	}
	if only["delta"] {
		run("delta", func() error { return deltaBench(bins) })
	}
	for i, b := range bins {
		label = ""
		if len(bins) > 1 {
			label = fmt.Sprintf("[%d] ", i+1)
		}
		if only["idle"] {
			run("idle", func() error { return idleBench(b) })
		}
		if only["arg"] {
			run("arg", func() error { return argBench(b) })
		}
		if only["symbol"] {
			run("symbol", func() error { return symbolBench(b) })
		}
		if only["kill9"] {
			run("kill9", func() error { return kill9Run(b) })
		}
	}
	if only["idle"] && turnBase != "" {
		label = baseLabel
		run("idle", func() error { return idleBench(turnBase) })
		label = ""
	}
}

// baseLabel prefixes the figures of bench/e2e/baselineturn.
const baseLabel = "[baseline: minimal Go agent] "

// withBase is bins with bench/e2e/baselineturn after them when it is measured.
func withBase(bins []string) []string {
	if turnBase == "" {
		return bins
	}
	return append(slices.Clone(bins), turnBase)
}

// labelOf is the prefix of the figures of all[j] (all = withBase(bins)): the binary's number when
// there are several, or the baseline's name.
func labelOf(j int, bins []string) string {
	switch {
	case j >= len(bins):
		return baseLabel
	case len(bins) > 1:
		return fmt.Sprintf("[%d] ", j+1)
	}
	return ""
}

// label prefixes each figure with its binary's number when there are several.
var label string

func report(format string, args ...any) { fmt.Printf(label+format, args...) }

func run(name string, f func() error) {
	if err := f(); err != nil {
		report("%s: FAILED: %v\n", name, err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "e2e:", err)
	os.Exit(1)
}

func build() (string, error) { return buildPkg("github.com/agentd-dev/agentd/cmd/agentd", "agentd") }

// buildPkg builds pkg static into a new temporary directory as name, and returns a copy of the
// linker's output: a file the linker just wrote starts measurably slower than a copy of it.
func buildPkg(pkg, name string) (string, error) {
	dir, err := os.MkdirTemp("", "agentd-e2e-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name+".link")
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		return "", err
	}
	return bin, os.Remove(out)
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// ---- one running agentd ----

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	home  string

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan json.RawMessage
	onFrame func(body []byte) // every frame agentd sends, before dispatch
	permit  string            // optionId answered to request_permission ("" = first option)
	done    chan struct{}
	err     error
}

// start runs bin with its own HOME and XDG directories; env is added to the environment.
func start(bin string, env ...string) (*child, error) {
	home, err := os.MkdirTemp("", "agentd-e2e-home-")
	if err != nil {
		return nil, err
	}
	return startIn(bin, home, env...)
}

// startIn runs bin with home as its HOME and XDG directories, so that a second process can find
// the first one's sessions.
func startIn(bin, home string, env ...string) (*child, error) {
	cmd := exec.Command(bin)
	if acpDoor() {
		cmd = exec.Command(bin, "acp")
	}
	cmd.Env = append(os.Environ(), "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=")
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stdin: stdin, home: home, waiting: map[int]chan json.RawMessage{}, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go c.read(bufio.NewReaderSize(stdout, 64<<10))
	return c, nil
}

func (c *child) close() {
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
	c.cmd.Wait()
	os.RemoveAll(c.home)
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) read(r *bufio.Reader) {
	defer close(c.done)
	for {
		body, err := frame.Read(r, acpDoor())
		if err != nil {
			if err != io.EOF {
				c.err = err
			}
			return
		}
		if f := c.onFrame; f != nil {
			f(body)
		}
		var m struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Result json.RawMessage  `json:"result"`
			Error  json.RawMessage  `json:"error"`
		}
		if json.Unmarshal(body, &m) != nil {
			c.err = fmt.Errorf("frame is not JSON: %.200q", body)
			return
		}
		switch {
		case m.Method != "" && m.ID != nil:
			c.answer(*m.ID, m.Method, body)
		case m.Method == "" && m.ID != nil:
			id, _ := strconv.Atoi(string(*m.ID))
			c.mu.Lock()
			ch := c.waiting[id]
			delete(c.waiting, id)
			c.mu.Unlock()
			if ch != nil {
				if m.Error != nil {
					ch <- append(json.RawMessage(`{"error":`), append(m.Error, '}')...)
				} else {
					ch <- m.Result
				}
			}
		}
	}
}

// answer replies to a reverse request: permission with c.permit, everything else "not found"
// (the driver declares no editor capabilities, so agentd reads and writes the disk itself).
func (c *child) answer(id json.RawMessage, method string, body []byte) {
	var reply string
	if method == "agent/session/request_permission" || method == "session/request_permission" {
		var p struct {
			Params struct {
				Options []struct {
					OptionID string `json:"optionId"`
				} `json:"options"`
			} `json:"params"`
		}
		json.Unmarshal(body, &p)
		opt := c.permit
		if opt == "" && len(p.Params.Options) > 0 {
			opt = p.Params.Options[0].OptionID
		}
		reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":%q}}}`, id, opt)
	} else if *editorFS && (method == "agent/fs/read_text_file" || method == "fs/read_text_file") {
		reply = readTextFile(id, body)
	} else {
		reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not supported by the e2e driver"}}`, id)
	}
	c.write([]byte(reply))
}

// readTextFile answers a read_text_file reverse request from the disk (with -editor-fs): the
// whole file, or limit lines from line (1-based) when they are given.
func readTextFile(id json.RawMessage, body []byte) string {
	var p struct {
		Params struct {
			Path  string `json:"path"`
			Line  int    `json:"line"`
			Limit int    `json:"limit"`
		} `json:"params"`
	}
	json.Unmarshal(body, &p)
	b, err := os.ReadFile(p.Params.Path)
	if err != nil {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32002,"message":%q}}`, id, err.Error())
	}
	text := string(b)
	if p.Params.Line > 1 || p.Params.Limit > 0 {
		lines := strings.SplitAfter(text, "\n")
		from := min(max(p.Params.Line-1, 0), len(lines))
		to := len(lines)
		if p.Params.Limit > 0 {
			to = min(from+p.Params.Limit, to)
		}
		text = strings.Join(lines[from:to], "")
	}
	res, _ := json.Marshal(map[string]string{"content": text})
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res)
}

var writeMu sync.Mutex

func (c *child) write(b []byte) {
	writeMu.Lock()
	defer writeMu.Unlock()
	c.stdin.Write(frame.Append(nil, b, acpDoor()))
}

func acpDoor() bool { return *doorFlag == "acp" }

// method is the LSP door's method name as the door being driven spells it.
func method(name string) string {
	if acpDoor() {
		return strings.TrimPrefix(name, "agent/")
	}
	return name
}

// call sends a request and waits for its answer.
func (c *child) call(lspName string, params any, timeout time.Duration) (json.RawMessage, error) {
	name := method(lspName)
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan json.RawMessage, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	c.write([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, name, p)))
	select {
	case res := <-ch:
		if bytes.HasPrefix(res, []byte(`{"error":`)) {
			return nil, fmt.Errorf("%s: %s", name, res)
		}
		return res, nil
	case <-c.done:
		return nil, fmt.Errorf("%s: agentd exited (%v)", name, c.err)
	case <-time.After(timeout):
		return nil, fmt.Errorf("%s: no answer in %v", name, timeout)
	}
}

func initParams(settings json.RawMessage) map[string]any {
	caps := map[string]any{}
	if *editorFS {
		caps["fs"] = map[string]any{"readTextFile": true}
	}
	if acpDoor() {
		return map[string]any{"protocolVersion": 1, "clientCapabilities": caps, "clientInfo": map[string]any{"name": "e2e", "version": "1"}}
	}
	return map[string]any{
		"processId": os.Getpid(), "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"agent": map[string]any{
			"protocolVersion": 1, "clientInfo": map[string]any{"name": "e2e"}, "clientCapabilities": caps,
			"settings": settings,
		}},
	}
}

// session starts bin against the model at url, initializes it and opens a session on root.
func session(bin, url, root string, env ...string) (*child, string, error) {
	c, err := start(bin, env...)
	if err != nil {
		return nil, "", err
	}
	if err := c.initialize(url); err != nil {
		c.close()
		return nil, "", err
	}
	sid, err := newSession(c, root)
	if err != nil {
		c.close()
		return nil, "", err
	}
	return c, sid, nil
}

// initialize runs the LSP handshake with the fake model at url as the only provider.
func (c *child) initialize(url string) error {
	settings, _ := json.Marshal(map[string]any{
		"provider":  "fm",
		"providers": map[string]any{"fm": map[string]any{"apiType": "openai", "baseUrl": url, "model": fakemodel.ModelID}},
	})
	if acpDoor() {
		// ACP has no initializationOptions: the settings are the user file's.
		dir := filepath.Join(c.home, "config", "agentd")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "config.json"), settings, 0o600); err != nil {
			return err
		}
		_, err := c.call("initialize", initParams(nil), 10*time.Second)
		return err
	}
	if _, err := c.call("initialize", initParams(settings), 10*time.Second); err != nil {
		return err
	}
	c.write([]byte(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))
	return nil
}

func newSession(c *child, root string) (string, error) {
	res, err := c.call("agent/session/new", map[string]any{"cwd": root, "mcpServers": []any{}}, 10*time.Second)
	if err != nil {
		return "", err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &s)
	return s.SessionID, nil
}

func (c *child) prompt(sid, text string, timeout time.Duration) error {
	res, err := c.call("agent/session/prompt", map[string]any{"sessionId": sid,
		"prompt": []map[string]any{{"type": "text", "text": text}}}, timeout)
	if err != nil {
		return err
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	json.Unmarshal(res, &r)
	if r.StopReason != "end_turn" {
		return fmt.Errorf("prompt ended with %s", res)
	}
	return nil
}

// ---- /proc ----

// cpu is the child's CPU time so far: every thread's sum_exec_runtime.
func cpu(pid int) time.Duration {
	dirs, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var ns int64
	for _, d := range dirs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, d.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			ns += v
		}
	}
	return time.Duration(ns)
}

// status returns a /proc/PID/status field in MiB (VmRSS, VmHWM).
func status(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, _ := strconv.Atoi(f[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

// switches is the number of context switches of every thread of pid so far, voluntary (a thread
// that parks: a goroutine hand-off that found no work) and not.
func switches(pid int) int {
	dirs, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	n := 0
	for _, d := range dirs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, d.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 2 && strings.HasSuffix(f[0], "ctxt_switches:") {
				v, _ := strconv.Atoi(f[1])
				n += v
			}
		}
	}
	return n
}

// syscalls is the number of read and write system calls pid has made (syscr + syscw of
// /proc/PID/io: read, write and their vector forms on files, pipes and sockets).
func syscalls(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && (f[0] == "syscr:" || f[0] == "syscw:") {
			v, _ := strconv.Atoi(f[1])
			n += v
		}
	}
	return n
}

func medianInt(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func quartiles(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("%s (p25 %s, p75 %s)", ms(s[len(s)/2]), ms(s[len(s)/4]), ms(s[len(s)*3/4]))
}

// ---- measurements ----

// spawnBench measures spawn → initialize for each binary, interleaved, with a baseline after
// them: bench/e2e/baseline, a static Go program that answers initialize in the same framing and
// nothing else, so the figures say how much of a start is the Go runtime on this machine and how
// much is agentd's.
func spawnBench(bins []string) {
	base, err := buildPkg("github.com/agentd-dev/agentd/bench/e2e/baseline", "baseline")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(filepath.Dir(base))
	all := append(slices.Clone(bins), base)
	wall := make([][]time.Duration, len(all))
	life := make([][]time.Duration, len(all))
	faults := make([][]int, len(all))
	for i := 0; i < *spawns; i++ {
		for j, b := range all {
			t0 := time.Now()
			c, err := start(b)
			if err != nil {
				fail(err)
			}
			if _, err := c.call("initialize", initParams(nil), 10*time.Second); err != nil {
				fail(err)
			}
			wall[j] = append(wall[j], time.Since(t0))
			c.close()
			st := c.cmd.ProcessState
			life[j] = append(life[j], st.UserTime()+st.SystemTime())
			if n, ok := pageFaults(st); ok {
				faults[j] = append(faults[j], n)
			}
		}
	}
	for j := range all {
		name := fmt.Sprintf("[%d]", j+1)
		if j == len(bins) {
			name = "[baseline: Go hello-initialize]"
		}
		pf := ""
		if len(faults[j]) > 0 {
			pf = fmt.Sprintf("; %d page faults", medianInt(faults[j]))
		}
		fmt.Printf("%s spawn → initialize: %s wall; CPU of the whole life (start, initialize, EOF, exit) %s%s; %d spawns\n",
			name, quartiles(wall[j]), ms(median(life[j])), pf, *spawns)
	}
}

// idleBench starts bin -idle-runs times, each time from a page cache without it (dropFromCache),
// and reports the median VmRSS once a session exists and a second has passed, with the range and
// the median run's resident pages by part.
func idleBench(bin string) error {
	fm := fakemodel.New(fakemodel.Script{})
	url, err := fm.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer fm.Close()
	root, _ := os.MkdirTemp("", "agentd-e2e-root-")
	defer os.RemoveAll(root)
	type sample struct {
		rss   float64
		parts string
	}
	var runs []sample
	for range max(*idleRuns, 1) {
		if err := dropFromCache(bin); err != nil {
			return err
		}
		c, _, err := session(bin, url, root)
		if err != nil {
			return err
		}
		time.Sleep(time.Second)
		runs = append(runs, sample{status(c.pid(), "VmRSS"), rssParts(c.pid())})
		c.close()
	}
	slices.SortFunc(runs, func(a, b sample) int { return cmp.Compare(a.rss, b.rss) })
	m := runs[len(runs)/2]
	report("idle RSS after initialize and session/new: %.1f MiB (%.1f–%.1f over %d starts; initialize only: see spawn); %s\n",
		m.rss, runs[0].rss, runs[len(runs)-1].rss, len(runs), m.parts)
	return nil
}

// rssParts says what the resident pages of pid are: the executable's, by segment (its code, its
// read-only data with the function tables, its data), and the rest (heap, stacks, runtime).
func rssParts(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return ""
	}
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	var text, ro, data, other float64
	var cur *float64
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-"):
			cur = &other
			if len(f) >= 6 && f[5] == exe {
				switch f[1][:3] {
				case "r-x":
					cur = &text
				case "r--":
					cur = &ro
				default:
					cur = &data
				}
			}
		case len(f) >= 2 && f[0] == "Rss:" && cur != nil:
			kb, _ := strconv.Atoi(f[1])
			*cur += float64(kb) / 1024
		}
	}
	return fmt.Sprintf("executable's code %.1f, read-only data %.1f, data %.1f; the rest %.1f MiB", text, ro, data, other)
}

var titleRoute = fakemodel.Route{Match: "You name coding conversations", Turn: fakemodel.Turn{Text: "A title"}}

// twoCallScript answers n two-call turns: read_file of a.txt, then text.
func twoCallScript(n int) fakemodel.Script {
	var s fakemodel.Script
	for range n {
		s.Turns = append(s.Turns,
			fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}},
			fakemodel.Turn{Text: "The file says hello."})
	}
	s.Routes = []fakemodel.Route{titleRoute}
	return s
}

// turn runs one prompt and returns its wall and the child's CPU.
func turn(c *child, sid, text string) (time.Duration, time.Duration, error) {
	c0, t0 := cpu(c.pid()), time.Now()
	err := c.prompt(sid, text, 60*time.Second)
	return time.Since(t0), cpu(c.pid()) - c0, err
}

func turnRoot() (string, error) {
	root, err := os.MkdirTemp("", "agentd-e2e-root-")
	if err != nil {
		return "", err
	}
	return root, os.WriteFile(filepath.Join(root, "a.txt"), []byte(strings.Repeat("hello, world\n", 200)), 0o644)
}

// turnBench measures the two-call turn for every binary, and for bench/e2e/baselineturn after
// them: cold turns alternate between the binaries' fresh processes, and warm turns between one
// process per binary, so that a shared machine's load falls on each alike. A binary's overhead is
// what its warm turns take above the baseline's (see overhead): what agentd adds to the exchanges
// themselves (the driver, the fake model, the pipes and the HTTP round trips are the floor).
func turnBench(bins []string) error {
	root, err := turnRoot()
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	all := withBase(bins)
	coldWall := make([][]time.Duration, len(all))
	coldCPU := make([][]time.Duration, len(all))
	for range *colds {
		for j, bin := range all {
			fm := fakemodel.New(twoCallScript(1))
			url, err := fm.Start("127.0.0.1:0")
			if err != nil {
				return err
			}
			c, sid, err := session(bin, url, root)
			if err != nil {
				fm.Close()
				return err
			}
			var rec *perfRec
			if *perfCold != "" && j < len(bins) {
				if rec, err = startPerf(c.pid(), fmt.Sprintf("%s.%d.%d", *perfCold, j+1, len(coldCPU[j]))); err != nil {
					return err
				}
				rec.enable()
			}
			w, cp, err := turn(c, sid, "read a.txt")
			if rec != nil {
				rec.disable()
				rec.stop()
			}
			c.close()
			fm.Close()
			if err != nil {
				return err
			}
			coldWall[j], coldCPU[j] = append(coldWall[j], w), append(coldCPU[j], cp)
		}
	}
	type warm struct {
		c        *child
		rec      *perfRec
		wall     []time.Duration
		cpu      []time.Duration
		switches []int
		syscalls []int
		io       tally
		ios      []counts
	}
	ws := make([]*warm, len(all))
	for j, bin := range all {
		w := &warm{}
		fm := fakemodel.New(twoCallScript(*turns + 1))
		fm.OnRequest(w.io.request)
		url, err := fm.Start("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer fm.Close()
		c, sid, err := session(bin, url, root)
		if err != nil {
			return err
		}
		defer c.close()
		if _, _, err := turn(c, sid, "read a.txt"); err != nil {
			return err
		}
		w.c = c
		c.onFrame = w.io.frame
		ws[j] = w
		if *perfOut != "" && j < len(bins) {
			out := *perfOut
			if len(bins) > 1 {
				out = fmt.Sprintf("%s.%d", out, j+1)
			}
			if w.rec, err = startPerf(c.pid(), out); err != nil {
				return err
			}
			defer w.rec.stop()
		}
	}
	for range *turns {
		for _, w := range ws {
			// Each warm turn starts a new session, as BenchmarkTwoCallTurn starts from an empty
			// history, so that the cost does not grow with the number of turns. The session's
			// creation is outside the measured window (and the profile's).
			sid, err := newSession(w.c, root)
			if err != nil {
				return err
			}
			w.rec.enable()
			io0 := w.io.get()
			sw0, sc0 := switches(w.c.pid()), syscalls(w.c.pid())
			wall, cp, err := turn(w.c, sid, "read a.txt")
			sw1, sc1 := switches(w.c.pid()), syscalls(w.c.pid())
			w.ios = append(w.ios, w.io.get().less(io0))
			w.rec.disable()
			if err != nil {
				return err
			}
			w.wall, w.cpu = append(w.wall, wall), append(w.cpu, cp)
			w.switches, w.syscalls = append(w.switches, sw1-sw0), append(w.syscalls, sc1-sc0)
		}
	}
	for j, w := range ws {
		label = labelOf(j, bins)
		report("two-call turn, cold (first of a fresh process, %d processes): wall %s, CPU %s\n", *colds, quartiles(coldWall[j]), quartiles(coldCPU[j]))
		report("two-call turn, warm (%d turns, each in a new session): wall %s, CPU %s\n", *turns, quartiles(w.wall), quartiles(w.cpu))
		report("  per warm turn, medians: %d context switches (every thread's), %d read and write system calls (/proc/PID/io)\n", medianInt(w.switches), medianInt(w.syscalls))
		report("  per warm turn, medians: %s\n", medianTally(w.ios))
	}
	if turnBase != "" {
		b := ws[len(bins)]
		for j, w := range ws[:len(bins)] {
			label = labelOf(j, bins)
			report("two-call turn overhead over the baseline (%s door): wall %s, CPU %s\n",
				*doorFlag, quartiles(overhead(w.wall, b.wall)), quartiles(overhead(w.cpu, b.cpu)))
		}
	}
	label = ""
	return nil
}

// tally counts what crosses the pipes and the model's socket: frames the binary sends the
// client, and the requests (title requests included) the fake model receives.
type tally struct {
	mu sync.Mutex
	n  counts
}

type counts struct{ frames, frameBytes, reqs, reqBytes int }

func (t *tally) frame(body []byte) {
	t.mu.Lock()
	t.n.frames++
	t.n.frameBytes += len(body)
	t.mu.Unlock()
}

func (t *tally) request(body []byte) {
	t.mu.Lock()
	t.n.reqs++
	t.n.reqBytes += len(body)
	t.mu.Unlock()
}

func (t *tally) get() counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

func (c counts) less(d counts) counts {
	return counts{frames: c.frames - d.frames, frameBytes: c.frameBytes - d.frameBytes, reqs: c.reqs - d.reqs, reqBytes: c.reqBytes - d.reqBytes}
}

// medianTally is the medians of each count over ts, as text.
func medianTally(ts []counts) string {
	pick := func(f func(counts) int) int {
		v := make([]int, len(ts))
		for i, t := range ts {
			v[i] = f(t)
		}
		return medianInt(v)
	}
	return fmt.Sprintf("%d frames (%d bytes) to the client, %d model requests (%d bytes)",
		pick(func(c counts) int { return c.frames }), pick(func(c counts) int { return c.frameBytes }),
		pick(func(c counts) int { return c.reqs }), pick(func(c counts) int { return c.reqBytes }))
}

// overhead is a binary's warm turns less the baseline's, round by round: the i-th turns of both
// ran one after the other, under the same load, so the differences keep what a shared machine's
// load moves out of the figure better than a difference of medians would.
func overhead(agentd, base []time.Duration) []time.Duration {
	d := make([]time.Duration, min(len(agentd), len(base)))
	for i := range d {
		d[i] = agentd[i] - base[i]
	}
	return d
}

// perfRec is a `perf record -g` of one process whose events are enabled only between enable
// and disable (perf's control FIFO), so that the profile holds the measured turns alone.
type perfRec struct {
	cmd      *exec.Cmd
	ctl, ack *os.File
	dir      string
}

func startPerf(pid int, out string) (*perfRec, error) {
	dir, err := os.MkdirTemp("", "agentd-e2e-perf-")
	if err != nil {
		return nil, err
	}
	ctl, ack := filepath.Join(dir, "ctl"), filepath.Join(dir, "ack")
	if out, err := exec.Command("mkfifo", "-m", "600", ctl, ack).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mkfifo: %v: %s", err, out)
	}
	cmd := exec.Command("perf", "record", "-F", "4999", "-g", "-D", "-1", "--control", "fifo:"+ctl+","+ack,
		"-p", strconv.Itoa(pid), "-o", out)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &perfRec{cmd: cmd, dir: dir}
	// Opening a FIFO blocks until perf opens the other end, so these return once it listens.
	if r.ctl, err = os.OpenFile(ctl, os.O_WRONLY, 0); err != nil {
		return nil, err
	}
	if r.ack, err = os.Open(ack); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *perfRec) command(c string) {
	if r == nil {
		return
	}
	fmt.Fprintln(r.ctl, c)
	buf := make([]byte, 16)
	r.ack.Read(buf) // "ack\n" once perf has done it
}

func (r *perfRec) enable()  { r.command("enable") }
func (r *perfRec) disable() { r.command("disable") }

func (r *perfRec) stop() {
	r.cmd.Process.Signal(os.Interrupt)
	r.cmd.Wait()
	r.ctl.Close()
	r.ack.Close()
	os.RemoveAll(r.dir)
}

// deltaBench measures the CPU per streamed delta for every binary. Each binary runs one daemon,
// and their long turns alternate, so that a shared machine's load falls on each alike.
func deltaBench(bins []string) error {
	root, err := turnRoot()
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	text := strings.Repeat("x", *deltas)
	type daemon struct {
		c                    *child
		sid                  string
		rec                  *perfRec
		mu                   sync.Mutex
		notes, noteBytes     int
		per                  []time.Duration
		wall                 time.Duration
		frames, bytesPerTurn int
	}
	all := withBase(bins)
	ds := make([]*daemon, len(all))
	for j, bin := range all {
		script := fakemodel.Script{Turns: []fakemodel.Turn{{Text: "warm"}}, Routes: []fakemodel.Route{titleRoute}}
		for range *deltaRounds {
			script.Turns = append(script.Turns, fakemodel.Turn{Text: "short"}, fakemodel.Turn{Text: text, ChunkSize: 1})
		}
		fm := fakemodel.New(script)
		url, err := fm.Start("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer fm.Close()
		c, sid, err := session(bin, url, root)
		if err != nil {
			return err
		}
		defer c.close()
		d := &daemon{c: c, sid: sid}
		ds[j] = d
		c.onFrame = func(body []byte) {
			d.mu.Lock()
			d.notes++
			d.noteBytes += len(body)
			d.mu.Unlock()
		}
		if _, _, err := turn(c, sid, "hi"); err != nil {
			return err
		}
		if *perfOut != "" && j < len(bins) {
			// The long turns alone, into FILE.delta.BINARY.
			if d.rec, err = startPerf(c.pid(), *perfOut+".delta."+filepath.Base(bin)); err != nil {
				return err
			}
			defer d.rec.stop()
		}
	}
	for range *deltaRounds {
		for _, d := range ds {
			_, short, err := turn(d.c, d.sid, "hi")
			if err != nil {
				return err
			}
			d.mu.Lock()
			n0, b0 := d.notes, d.noteBytes
			d.mu.Unlock()
			d.rec.enable()
			w, long, err := turn(d.c, d.sid, "hi")
			d.rec.disable()
			if err != nil {
				return err
			}
			d.mu.Lock()
			d.frames, d.bytesPerTurn = d.notes-n0, d.noteBytes-b0
			d.mu.Unlock()
			d.per = append(d.per, (long-short)/time.Duration(*deltas))
			d.wall = w
		}
	}
	for j, d := range ds {
		label = labelOf(j, bins)
		var per []string
		for _, p := range d.per {
			per = append(per, p.String())
		}
		report("streamed deltas: %d one-character deltas in %s wall; CPU per delta %s (turn less a short turn); %d frames, %.0f bytes per delta\n",
			*deltas, ms(d.wall), strings.Join(per, " and "), d.frames, float64(d.bytesPerTurn)/float64(*deltas))
	}
	label = ""
	return nil
}

func argBench(bin string) error {
	root, err := turnRoot()
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", *argKB*1024/64)
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	fm := fakemodel.New(fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_big", Name: "create_file", Arguments: args}}, ArgsChunkSize: 256, ChunkDelayMs: *argDelayMs},
		{Text: "Not written."},
	}, Routes: []fakemodel.Route{titleRoute}})
	url, err := fm.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer fm.Close()
	c, sid, err := session(bin, url, root)
	if err != nil {
		return err
	}
	defer c.close()
	c.permit = "reject_once"
	var mu sync.Mutex
	var frames, sent int
	c.onFrame = func(body []byte) {
		if bytes.Contains(body, []byte(`"call_big"`)) && bytes.Contains(body, []byte(`"agent/session/update"`)) {
			mu.Lock()
			frames++
			sent += len(body)
			mu.Unlock()
		}
	}
	w, _, err := turn(c, sid, "write big.txt")
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	report("streamed argument: %d-byte create_file arguments in 256-byte pieces every %d ms (%s): %d updates, %d bytes = %.1f× the argument\n",
		len(args), *argDelayMs, ms(w), frames, sent, float64(sent)/float64(len(args)))
	return nil
}

// symbolTree writes n Go files of 30 functions each (ctags reports ~32 tags a file); one in
// every -symbol-every also defines a Widget type (the query), so that many files are candidates.
func symbolTree(n int) (string, error) {
	root, err := os.MkdirTemp("", "agentd-e2e-tree-")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return root, err
			}
		}
		b.Reset()
		fmt.Fprintf(&b, "package pkg%03d\n\n", i/100)
		if i%max(*every, 1) == 0 {
			fmt.Fprintf(&b, "// Widget%d is what find_symbol looks for.\ntype Widget%d struct{ n int }\n\n", i, i)
		}
		for f := range 30 {
			fmt.Fprintf(&b, "func helper%d_%d(x int) int {\n\treturn x * %d\n}\n\n", i, f, f)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", i)), []byte(b.String()), 0o644); err != nil {
			return root, err
		}
	}
	return root, nil
}

func symbolBench(bin string) error {
	root, err := symbolTree(*files)
	defer os.RemoveAll(root)
	if err != nil {
		return err
	}
	noCtags, err := os.MkdirTemp("", "agentd-e2e-path-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(noCtags)
	ctags, _ := exec.LookPath("ctags")
	for _, engine := range []struct{ name, path string }{{"universal-ctags", os.Getenv("PATH")}, {"built-in scanner", noCtags}} {
		if engine.name == "universal-ctags" && ctags == "" {
			fmt.Println("find_symbol: no ctags on PATH; skipped")
			continue
		}
		fm := fakemodel.New(fakemodel.Script{Turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{{Name: "find_symbol", Arguments: json.RawMessage(`{"query":"Widget"}`)}}},
			{Text: "Found."},
		}, Routes: []fakemodel.Route{titleRoute}})
		url, err := fm.Start("127.0.0.1:0")
		if err != nil {
			return err
		}
		var source string
		var mu sync.Mutex
		c, sid, err := session(bin, url, root, "PATH="+engine.path)
		if err != nil {
			fm.Close()
			return err
		}
		c.onFrame = func(body []byte) {
			if i := bytes.Index(body, []byte(`[from `)); i >= 0 {
				mu.Lock()
				source = string(body[i:min(len(body), i+40)])
				mu.Unlock()
			}
		}
		before := status(c.pid(), "VmRSS")
		w, cp, err := turn(c, sid, "find Widget")
		if err != nil {
			c.close()
			fm.Close()
			return err
		}
		hwm := status(c.pid(), "VmHWM")
		after := []string{}
		for _, wait := range []time.Duration{0, time.Second, 2 * time.Second, 2 * time.Second} {
			time.Sleep(wait)
			after = append(after, fmt.Sprintf("%.0f", status(c.pid(), "VmRSS")))
		}
		c.close()
		fm.Close()
		mu.Lock()
		src := source
		mu.Unlock()
		if !strings.Contains(src, engine.name) && !(engine.name == "built-in scanner" && strings.Contains(src, "definition scanner")) {
			report("find_symbol (%s): answered %q, not from this engine\n", engine.name, src)
		}
		report("find_symbol (%s), %d files, 1 in %d a candidate: turn %s wall, %s CPU; RSS %.0f MiB before, peak %.0f MiB, after 0/1/3/5 s: %s MiB\n",
			engine.name, *files, *every, ms(w), ms(cp), before, hwm, strings.Join(after, "/"))
	}
	return nil
}
