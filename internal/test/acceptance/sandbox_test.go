package acceptance_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/sandbox"
)

// sandboxOrSkip skips where the kernel cannot sandbox (the suite is for Linux CI, which can).
func sandboxOrSkip(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's")
	}
	if st := sandbox.Probe(); !st.Available {
		t.Skipf("no sandbox here: %s", st.Reason)
	}
}

// runCall is a model response that runs script with sh in the project.
func runCall(id, script string, extra map[string]any) map[string]any {
	args := map[string]any{"command": []string{"sh", "-c", script}}
	for k, v := range extra {
		args[k] = v
	}
	return map[string]any{"toolCalls": []any{map[string]any{"id": id, "name": "run_program", "args": args}}}
}

// outputOf is what a finished run_program call printed (its rawOutput's output).
func outputOf(f map[string]any) string {
	raw, _ := f["rawOutput"].(map[string]any)
	s, _ := raw["output"].(string)
	return s
}

// sandboxSettings is auto mode with the replay model and the sandbox setting given.
func sandboxSettings(t *testing.T, box map[string]any, rs ...map[string]any) json.RawMessage {
	t.Helper()
	settings := map[string]any{}
	json.Unmarshal(replay(t, responses(append(rs, map[string]any{"text": "done"})...)), &settings)
	settings["mode"] = "auto"
	if box != nil {
		settings["sandbox"] = box
	}
	raw, _ := json.Marshal(settings)
	return raw
}

// The escape suite: in auto mode, with no question asked, the model's programs try to write
// outside the roots, read the denied files, reach the network and a Unix socket, and trace or
// signal agentd. None succeeds; each says it tried.
func TestSandboxEscapes(t *testing.T) {
	t.Parallel()
	sandboxOrSkip(t)
	outside := realDir(t)
	os.WriteFile(filepath.Join(outside, "file.txt"), []byte("outside\n"), 0o644)

	var tcpHits, udpHits, unixHits atomic.Int32
	tl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			tcpHits.Add(1)
			c.Close()
		}
	}()
	ul, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ul.Close() })
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := ul.ReadFrom(buf); err != nil {
				return
			}
			udpHits.Add(1)
		}
	}()
	sock := filepath.Join(outside, "agent.sock")
	xl, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xl.Close() })
	go func() {
		for {
			c, err := xl.Accept()
			if err != nil {
				return
			}
			unixHits.Add(1)
			c.Close()
		}
	}()
	tport := tl.Addr().(*net.TCPAddr).Port
	uport := ul.LocalAddr().(*net.UDPAddr).Port
	root, home := realDir(t), realDir(t)
	dotdot, _ := filepath.Rel(root, outside)

	// Each attack prints ESCAPED when its step succeeds; TRIED shows it ran at all.
	attacks := []struct{ id, script string }{
		{"abs", `echo x > ` + filepath.Join(outside, "abs") + ` && echo ESCAPED`},
		{"dotdot", `echo x > ` + dotdot + `/dd && echo ESCAPED`},
		{"symlink", `echo x > link/sym && echo ESCAPED`},
		{"hardlink", `ln ` + filepath.Join(outside, "file.txt") + ` hard && echo ESCAPED`},
		{"rename", `mv ` + filepath.Join(outside, "file.txt") + ` moved && echo ESCAPED`},
		{"dotfile", `echo x >> "$HOME/.bashrc" && echo ESCAPED`},
		{"hook", `echo x > .git/hooks/pre-commit && echo ESCAPED`},
		{"gitconfig", `echo x >> .git/config && echo ESCAPED`},
		{"agentddir", `echo x > .agentd/config.json && echo ESCAPED`},
		{"gitswap", `mv .git .git-old && mkdir .git && echo x > .git/config && echo ESCAPED`},
		{"agentdnew", `mkdir -p "$XDG_STATE_HOME/agentd" && echo x > "$XDG_STATE_HOME/agentd/grants.json" && echo ESCAPED`},
		{"ssh", `cat "$HOME/.ssh/id_ed25519" && echo ESCAPED`},
		{"netrc", `cat "$HOME/.netrc" && echo ESCAPED`},
		{"keys", `cat "$XDG_CONFIG_HOME/agentd/secrets.json" && echo ESCAPED`},
		{"tcp", fmt.Sprintf(`curl -s -m 3 http://127.0.0.1:%d/ ; bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d' && echo ESCAPED`, tport, tport)},
		{"udp", fmt.Sprintf(`bash -c 'echo x > /dev/udp/127.0.0.1/%d' && echo ESCAPED`, uport)},
		{"unix", `curl -s -m 3 --unix-socket ` + sock + ` http://x/ ; test $? -ne 7 && echo ESCAPED`},
		{"dns", `getent ahosts example.com && echo ESCAPED`},
		{"ptrace", `strace -p $PPID -o /dev/null & sleep 1; kill -0 $! 2>/dev/null && echo ESCAPED`},
		{"signal", `kill -CONT $PPID && echo ESCAPED`},
		{"environ", `cat /proc/$PPID/environ >/dev/null && echo ESCAPED`},
	}
	var rs []map[string]any
	for _, a := range attacks {
		rs = append(rs, runCall(a.id, a.script+"; echo TRIED", nil))
	}
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("PRIVATE-KEY-BYTES\n"), 0o600)
	os.WriteFile(filepath.Join(home, ".netrc"), []byte("machine m password NETRC-SECRET\n"), 0o600)
	os.MkdirAll(filepath.Join(home, "config", "agentd"), 0o700)
	os.WriteFile(filepath.Join(home, "config", "agentd", "secrets.json"), []byte(`{"k":"STORE-SECRET"}`), 0o600)
	os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755)
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644)
	os.MkdirAll(filepath.Join(root, ".agentd"), 0o755)
	os.Symlink(outside, filepath.Join(root, "link"))
	e := startSandboxed(t, sandboxSettings(t, nil, rs...), root, home)
	sid := e.newSession()
	e.prompt(sid, "escape")
	for _, a := range attacks {
		f := finalUpdate(e, sid, a.id)
		out := outputOf(f)
		if !strings.Contains(out, "TRIED") {
			t.Errorf("%s did not run: %s", a.id, mustMarshal(f))
			continue
		}
		if strings.Contains(out, "ESCAPED") || strings.Contains(out, "SECRET") || strings.Contains(out, "PRIVATE-KEY") {
			t.Errorf("%s escaped the sandbox:\n%s", a.id, out)
		}
	}
	for _, f := range []string{filepath.Join(outside, "abs"), filepath.Join(outside, "dd"), filepath.Join(outside, "sym"), filepath.Join(root, "hard"), filepath.Join(root, "moved"), filepath.Join(home, ".bashrc"), filepath.Join(root, ".git", "hooks", "pre-commit"), filepath.Join(root, ".agentd", "config.json"), filepath.Join(home, "state", "agentd", "grants.json"), filepath.Join(root, ".git-old")} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config = %q", b)
	}
	if n := tcpHits.Load() + udpHits.Load() + unixHits.Load(); n != 0 {
		t.Errorf("the listeners were reached: tcp %d, udp %d, unix %d", tcpHits.Load(), udpHits.Load(), unixHits.Load())
	}
	// Every program ran sandboxed, and said so.
	for _, u := range kinds(e.rawUpdates(sid), "tool_call_update") {
		if m, ok := u["_meta"].(map[string]any); ok && m["agentd/sandbox"] != nil {
			if box, _ := m["agentd/sandbox"].(map[string]any); box["applied"] != true || box["network"] != false {
				t.Errorf("_meta[agentd/sandbox] = %v", box)
			}
			return
		}
	}
	t.Error("no tool_call_update carried _meta[agentd/sandbox]")
}

// In a project without .agentd/ and a repository without .git/hooks, a program cannot create
// either (a config.json there would be agentd's settings, a hook would run outside the sandbox
// later), and the project is left as it was: no placeholder remains.
func TestSandboxEscapesIntoMissingEntries(t *testing.T) {
	t.Parallel()
	sandboxOrSkip(t)
	root, home := realDir(t), realDir(t)
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	attacks := []struct{ id, script string }{
		{"agentdnew", `mkdir -p .agentd && echo '{"mode":"auto"}' > .agentd/config.json && echo ESCAPED`},
		{"agentdfile", `echo x > .agentd && echo ESCAPED`},
		{"hooksnew", `mkdir -p .git/hooks && echo x > .git/hooks/pre-commit && echo ESCAPED`},
		{"gitswap", `mv .git .git-old && mkdir .git && echo x > .git/config && echo ESCAPED`},
	}
	var rs []map[string]any
	for _, a := range attacks {
		rs = append(rs, runCall(a.id, a.script+"; echo TRIED", nil))
	}
	e := startSandboxed(t, sandboxSettings(t, nil, rs...), root, home)
	sid := e.newSession()
	e.prompt(sid, "escape")
	for _, a := range attacks {
		out := outputOf(finalUpdate(e, sid, a.id))
		if !strings.Contains(out, "TRIED") || strings.Contains(out, "ESCAPED") {
			t.Errorf("%s: %s", a.id, out)
		}
	}
	for _, rel := range []string{".agentd", ".git/hooks", ".git-old", ".git/config"} {
		if _, err := os.Lstat(filepath.Join(root, rel)); err == nil {
			t.Errorf("%s exists after the programs", rel)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".git", "HEAD")); string(b) != "ref: refs/heads/main\n" {
		t.Errorf(".git was replaced: HEAD = %q", b)
	}
}

// startSandboxed is start on root with HOME (and the XDG directories under it) at home, so the
// test can plant the files a program must not read.
func startSandboxed(t *testing.T, settings json.RawMessage, root, home string, vars ...string) *env {
	t.Helper()
	vars = append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache")}, vars...)
	p := startProc(t, filepath.Join(home, "state"), vars...)
	opts := fakeeditor.Full()
	opts.Settings, opts.Timeout = settings, 30*time.Second
	ed := fakeeditor.New(t, stdioRW{r: p.stdout, w: p.stdin}, opts)
	res, err := ed.Initialize(ctxT(t), root)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return &env{t: t, p: p, ed: ed, root: root, init: res}
}

// What a project needs still works in the sandbox: building and testing a Go module, the
// private temporary directory, the system headers and the toolchain; nothing asks in auto mode.
func TestSandboxRunsTheBuild(t *testing.T) {
	t.Parallel()
	sandboxOrSkip(t)
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	cache := strings.TrimSpace(string(gocache))
	root, home := realDir(t), realDir(t)
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/tiny\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() { println(add(1, 2)) }\n\nfunc add(a, b int) int { return a + b }\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main_test.go"), []byte("package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n"), 0o644)
	goEnv := map[string]any{"env": map[string]string{"GOCACHE": cache, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GOPATH": filepath.Join(home, "go")}}
	steps := []struct{ id, script string }{
		{"build", `go build -o tiny . && ./tiny && echo OK`},
		{"test", `go test ./... && echo OK`},
		{"tmp", `echo t > "$TMPDIR/t" && test "$(cat "$TMPDIR/t")" = t && echo OK`},
		{"headers", `cat /usr/include/stdio.h >/dev/null && ls "$(go env GOROOT)/src/fmt" >/dev/null && go version && echo OK`},
	}
	var rs []map[string]any
	for _, s := range steps {
		rs = append(rs, runCall(s.id, s.script, goEnv))
	}
	box := map[string]any{"writable": []string{cache}}
	e := startSandboxed(t, sandboxSettings(t, box, rs...), root, home)
	sid := e.newSession()
	e.prompt(sid, "build it")
	for _, s := range steps {
		f := finalUpdate(e, sid, s.id)
		if out := outputOf(f); f == nil || f["status"] != "completed" || !strings.Contains(out, "OK") {
			t.Errorf("%s failed in the sandbox: %v\n%s", s.id, f, out)
		}
	}
}

// Fail-closed: where the sandbox cannot be applied (made unavailable on purpose here), auto mode
// asks before a program runs, and a notice says why, once.
func TestSandboxUnavailableAsks(t *testing.T) {
	t.Parallel()
	root, home := realDir(t), realDir(t)
	e := startSandboxed(t, sandboxSettings(t, nil, runCall("p1", "echo one", nil), runCall("p2", "echo two", nil)), root, home, "AGENTD_TEST_SANDBOX_UNAVAILABLE=1")
	e.ed.AnswerPermissions("reject_once", "reject_once")
	sid := e.newSession()
	e.prompt(sid, "run")
	reqs := e.ed.PermissionRequests()
	if len(reqs) != 2 {
		t.Fatalf("auto mode without a sandbox asked %d times, want 2", len(reqs))
	}
	for _, id := range []string{"p1", "p2"} {
		if f := finalUpdate(e, sid, id); f == nil || f["status"] != "failed" {
			t.Errorf("%s ran although its question was rejected: %v", id, f)
		}
	}
	notices := 0
	for _, u := range kinds(e.rawUpdates(sid), "notice") {
		if strings.Contains(fmt.Sprint(u), "cannot be sandboxed") {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d notices said programs cannot be sandboxed, want 1", notices)
	}
}

// A program the model asks to run outside the sandbox is a question even in auto mode, with
// the model's justification on the card, and it can only be allowed once.
func TestSandboxEscapeAsks(t *testing.T) {
	t.Parallel()
	sandboxOrSkip(t)
	root, home := realDir(t), realDir(t)
	out := realDir(t)
	target := filepath.Join(out, "written")
	e := startSandboxed(t, sandboxSettings(t, nil,
		runCall("x", "echo x > "+target, map[string]any{"sandbox": false, "justification": "must write the shared cache"}),
		runCall("y", "echo y", nil),
	), root, home)
	e.ed.AnswerPermissions("allow_once")
	sid := e.newSession()
	e.prompt(sid, "run")
	reqs := e.ed.PermissionRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d permission requests, want 1 (the escape only)", len(reqs))
	}
	b, _ := json.Marshal(reqs[0])
	if !strings.Contains(string(b), "must write the shared cache") {
		t.Errorf("the card does not show the justification: %s", b)
	}
	if !strings.Contains(string(b), `"justification":"must write the shared cache"`) || !strings.Contains(string(b), `"sandbox":false`) {
		t.Errorf("rawInput does not carry sandbox:false and the justification: %s", b)
	}
	for _, o := range reqs[0].Options {
		if o.OptionID == "allow_session" || o.OptionID == "allow_always" || o.OptionID == "allow_sandboxed_session" {
			t.Errorf("an escape offers %s", o.OptionID)
		}
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the allowed escape did not run outside the sandbox: %v", err)
	}
	if f := finalUpdate(e, sid, "y"); f == nil || f["status"] != "completed" {
		t.Errorf("the sandboxed program after it: %v", f)
	}
}

// In ask mode the card says the program runs sandboxed and offers to allow sandboxed programs
// for the session; taking it answers the next sandboxed program without a question.
func TestSandboxAskModeOffersSandboxedSession(t *testing.T) {
	t.Parallel()
	sandboxOrSkip(t)
	root, home := realDir(t), realDir(t)
	settings := map[string]any{}
	json.Unmarshal(sandboxSettings(t, nil, runCall("a", "echo a", nil), runCall("b", "echo b", nil)), &settings)
	settings["mode"] = "ask"
	raw, _ := json.Marshal(settings)
	e := startSandboxed(t, raw, root, home)
	e.ed.AnswerPermissions("allow_sandboxed_session")
	sid := e.newSession()
	e.prompt(sid, "run")
	reqs := e.ed.PermissionRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d permission requests, want 1", len(reqs))
	}
	b, _ := json.Marshal(reqs[0])
	if !strings.Contains(string(b), "sandboxed") || !strings.Contains(string(b), "Allow sandboxed programs for this session") || !strings.Contains(string(b), `"applied":true`) {
		t.Errorf("the card does not say the program runs sandboxed: %s", b)
	}
	for _, id := range []string{"a", "b"} {
		if f := finalUpdate(e, sid, id); f == nil || f["status"] != "completed" {
			t.Errorf("%s: %v", id, f)
		}
	}
}

// A background program (sandboxed, in auto mode) answers at once, program_output reads it, and
// it dies with agentd even when agentd is killed with SIGKILL (Linux: Pdeathsig).
func TestBackgroundProgramDiesWithAgentd(t *testing.T) {
	t.Parallel()
	sandboxOrSkip(t)
	root, home := realDir(t), realDir(t)
	start := runCall("bg", `echo $$ > bg.pid; echo serving; exec sleep 300`, map[string]any{"background": true})
	read := map[string]any{"toolCalls": []any{map[string]any{"id": "out", "name": "program_output", "args": map[string]any{"program_id": "prog_1"}}}}
	wait := runCall("w", `for i in $(seq 100); do test -s bg.pid && break; sleep 0.05; done; sleep 0.2; echo waited`, nil)
	e := startSandboxed(t, sandboxSettings(t, nil, start, wait, read), root, home)
	sid := e.newSession()
	e.prompt(sid, "start the server")
	if f := finalUpdate(e, sid, "bg"); f == nil || f["status"] != "completed" || !strings.Contains(string(mustMarshal(f)), "prog_1") {
		t.Fatalf("the background start: %s", mustMarshal(f))
	}
	if f := finalUpdate(e, sid, "out"); f == nil || !strings.Contains(string(mustMarshal(f)), "serving") || !strings.Contains(string(mustMarshal(f)), "running") {
		t.Errorf("program_output: %s", mustMarshal(f))
	}
	b, err := os.ReadFile(filepath.Join(root, "bg.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	if _, err := os.Stat("/proc/" + pid); err != nil {
		t.Fatalf("the background program is not running: %v", err)
	}
	e.p.cmd.Process.Kill()
	eventually(t, "the background program to die with agentd", func() bool {
		_, err := os.Stat("/proc/" + pid)
		return os.IsNotExist(err) || zombie(pid)
	})
}
