//go:build unix

package tools

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRunProgram(t *testing.T) {
	h := newHarness(t, map[string]string{"sub/f.txt": "hello\n"})
	saved := 0
	h.env.SaveBeforeExec = func(ctx context.Context) string { saved++; return "could not save x.go" }
	r := mustOK(t, h.run("run_program", map[string]any{"command": []string{"cat", "f.txt"}, "cwd": "sub"}))
	mustContain(t, r.Output, "$ cat f.txt   (in sub)\n", "[could not save x.go]", "hello\n", "[exit code 0 after")
	if saved != 1 {
		t.Fatalf("SaveBeforeExec called %d times", saved)
	}
	if len(h.asked) != 1 || strings.Join(h.asked[0].Command, " ") != "cat f.txt" || h.asked[0].Cwd != h.path("sub") || h.asked[0].Kind != "execute" {
		t.Fatalf("permission request %+v", h.asked)
	}
	if strings.Join(h.progress, "") != "hello\n" {
		t.Fatalf("progress %q", h.progress)
	}
	raw := r.Raw.(map[string]any)
	if raw["exitCode"] != 0 || raw["timedOut"] != false {
		t.Fatalf("raw %+v", raw)
	}

	r = mustOK(t, h.run("run_program", map[string]any{"command": []string{"sh", "-c", "echo out; echo err >&2; exit 3"}}))
	mustContain(t, r.Output, "out\n", "err\n", "[exit code 3")

	r = mustOK(t, h.run("run_program", map[string]any{"command": []string{"sh", "-c", "cat; echo \"v=$MYVAR\""}, "stdin": "from stdin\n", "env": map[string]string{"MYVAR": "42"}}))
	mustContain(t, r.Output, "from stdin\n", "v=42")

	// Without stdin the program reads end of input at once instead of waiting.
	r = mustOK(t, h.run("run_program", map[string]any{"command": []string{"cat"}, "timeout_seconds": 30}))
	mustContain(t, r.Output, "[exit code 0")
}

func TestRunProgramOutputCap(t *testing.T) {
	h := newHarness(t, nil)
	r := mustOK(t, h.run("run_program", map[string]any{"command": []string{"sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done"}, "max_output_bytes": 1000}))
	mustContain(t, r.Output, "line0\n", "bytes of output cut", "line1999\n")
	if len(r.Output) > 1300 {
		t.Fatalf("output not capped: %d bytes", len(r.Output))
	}
}

func TestRunProgramTimeoutKillsGroup(t *testing.T) {
	h := newHarness(t, nil)
	pidFile := h.path("pid")
	start := time.Now()
	r := h.run("run_program", map[string]any{"command": []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile + "; echo started; wait"}, "timeout_seconds": 1})
	mustErr(t, r, "started", "timed out after 1s")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v", d)
	}
	if r.Raw.(map[string]any)["timedOut"] != true {
		t.Fatal("timedOut not set")
	}
	assertDead(t, pidFile)
}

func TestRunProgramCancel(t *testing.T) {
	h := newHarness(t, nil)
	pidFile := h.path("pid")
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	h.env.Progress = func(s string) {
		if strings.Contains(s, "started") {
			close(started)
		}
	}
	done := make(chan Result)
	go func() {
		done <- h.runCtx(ctx, "run_program", map[string]any{"command": []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile + "; echo started; wait"}, "timeout_seconds": 600})
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("program did not start")
	}
	cancel()
	select {
	case r := <-done:
		mustErr(t, r, "cancelled")
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not stop the program")
	}
	assertDead(t, pidFile)
}

// assertDead waits (with a deadline) until the pid in file is gone or a zombie.
func assertDead(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
				return
			}
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("grandchild %d survived", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunProgramRefusals(t *testing.T) {
	h := newHarness(t, nil)
	mustErr(t, h.run("run_program", map[string]any{}), "missing required field command")
	mustErr(t, h.run("run_program", map[string]any{"shell": "echo hi | wc"}), "field shell", "turned off")
	mustErr(t, h.run("run_program", map[string]any{"command": []string{"ls"}, "shell": "ls"}), "not both")
	mustErr(t, h.run("run_program", map[string]any{"command": []string{"ls"}, "cwd": "/"}), "field cwd", "outside")
	mustErr(t, h.run("run_program", map[string]any{"command": []string{"ls"}, "cwd": "nope"}), "field cwd", "not an existing directory")
	mustErr(t, h.run("run_program", map[string]any{"command": []string{""}}), "command[0]")
	mustErr(t, h.run("run_program", map[string]any{"command": "ls -la"}), "field command must be an array")
	mustErr(t, h.run("run_program", map[string]any{"command": []string{"ls"}, "timeout_seconds": 99999}), "timeout_seconds", "maximum")
	mustErr(t, h.run("run_program", map[string]any{"command": []string{"ls"}, "env": map[string]any{"A": 1}}), "field env.A must be a string")
	mustErr(t, h.run("run_program", map[string]any{"command": []string{"definitely-not-a-program-xyz"}}), "could not start")
	if len(h.asked) != 1 {
		t.Fatalf("asked %d times; only the valid call should ask", len(h.asked))
	}
	h.deny = true
	mustErr(t, h.run("run_program", map[string]any{"command": []string{"touch", "made"}}), "permission denied")
	if _, err := os.Stat(h.path("made")); err == nil {
		t.Fatal("a denied program ran")
	}
	h.deny = false
	h.env.AllowShell = true
	r := mustOK(t, h.run("run_program", map[string]any{"shell": "echo a b | wc -w"}))
	mustContain(t, r.Output, "2")
}

func TestRunProgramStreamsCoalesced(t *testing.T) {
	h := newHarness(t, nil)
	r := mustOK(t, h.run("run_program", map[string]any{"command": []string{"sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); done"}, "max_output_bytes": 1048576}))
	h.mu.Lock()
	defer h.mu.Unlock()
	streamed := strings.Join(h.progress, "")
	if !strings.Contains(r.Output, streamed) || !strings.HasPrefix(streamed, "line0\n") || !strings.HasSuffix(streamed, "line2999\n") {
		t.Fatalf("streamed output differs from the result: %d bytes streamed", len(streamed))
	}
	if len(h.progress) > 100 {
		t.Fatalf("%d progress updates for 3000 lines; output is not coalesced", len(h.progress))
	}
}

func TestCaptureKeepsUTF8Whole(t *testing.T) {
	var got []string
	c := &capture{max: 1 << 20, progress: func(s string) { got = append(got, s) }}
	b := []byte(strings.Repeat("é", streamChunk)) // 2 bytes each: chunks end mid-rune
	for i := 0; i < len(b); i += 1000 {
		c.Write(b[i:min(i+1000, len(b))])
	}
	c.flush()
	for _, s := range got {
		if !utf8.ValidString(s) {
			t.Fatalf("a streamed chunk splits a rune: %q", s[len(s)-3:])
		}
	}
	if strings.Join(got, "") != string(b) {
		t.Fatal("streamed text differs")
	}
}

// A program the model runs must not read the provider keys from agentd's environment: its output
// goes to the transcript and the model's context. The variables Env.HideEnv names are removed
// (session's TestProgramsSeeNoProviderKeys checks that list is the registry's); others pass.
func TestRunProgramDoesNotInheritKeys(t *testing.T) {
	vars := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "MY_LAN_KEY"}
	for _, v := range vars {
		t.Setenv(v, "sk-secret-"+v)
	}
	t.Setenv("AGENTD_TEST_PLAIN", "visible")
	h := newHarness(t, nil)
	h.env.HideEnv = vars // the engine fills it from the providers registry's KeyEnvNames
	script := "env; echo plain=$AGENTD_TEST_PLAIN"
	for _, v := range vars {
		script += "; echo " + v + "=${" + v + "-unset}"
	}
	r := mustOK(t, h.run("run_program", map[string]any{"command": []string{"sh", "-c", script}}))
	if strings.Contains(r.Output, "sk-secret") {
		t.Fatalf("a key reached the program:\n%s", r.Output)
	}
	mustContain(t, r.Output, "plain=visible", "ANTHROPIC_API_KEY=unset", "MY_LAN_KEY=unset")
}

// A program that exits normally must not leave what it started in the background running past
// the call: not a plain `&` child, not one under nohup, and (on Linux) not one that left the
// process group with setsid.
func TestRunProgramKillsWhatItLeftBehind(t *testing.T) {
	h := newHarness(t, nil)
	script := "sleep 300 & echo $! > bg.pid; " +
		"nohup sleep 300 >/dev/null 2>&1 & echo $! > nohup.pid; "
	files := []string{"bg.pid", "nohup.pid"}
	if runtime.GOOS == "linux" {
		script += "setsid sleep 300 & echo $! > setsid.pid; "
		files = append(files, "setsid.pid")
	}
	script += "sleep 0.2; echo leader done"
	r := mustOK(t, h.run("run_program", map[string]any{"command": []string{"sh", "-c", script}, "timeout_seconds": 60}))
	mustContain(t, r.Output, "leader done", "[exit code 0")
	for _, f := range files {
		assertDead(t, h.path(f))
	}
}

// The question names the variables and the input the program gets, in the request and in the
// title, so that the policy can bind a grant to them and any client shows them.
func TestRunProgramAsksWithEnvAndStdin(t *testing.T) {
	h := newHarness(t, nil)
	mustOK(t, h.run("run_program", map[string]any{"command": []string{"cat"}, "env": map[string]string{"LD_PRELOAD": "/tmp/evil.so", "B": "two words"}, "stdin": "hello\n"}))
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.asked) != 1 {
		t.Fatalf("asked %d times", len(h.asked))
	}
	req := h.asked[0]
	if req.Env["LD_PRELOAD"] != "/tmp/evil.so" || req.Env["B"] != "two words" || req.Stdin != "hello\n" {
		t.Fatalf("request env %v stdin %q", req.Env, req.Stdin)
	}
	if want := "Run B='two words' LD_PRELOAD=/tmp/evil.so cat with stdin (6 bytes, shown below)"; req.Title != want {
		t.Fatalf("title %q, want %q", req.Title, want)
	}
}
