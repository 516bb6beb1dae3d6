package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
)

// execEnv isolates a run from the user's config, state and keys.
func execEnv(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("AGENTD_SECRET_STORE", "file") // never the user's real keyring
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} {
		t.Setenv(k, "")
	}
}

func runDemo(t *testing.T, args ...string) (code int, stdout, stderr string, copyDir string) {
	t.Helper()
	in, err := os.Open(os.DevNull) // not a terminal: permission prompts are denied
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	return runDemoOn(t, in, args...)
}

// runDemoOn runs the demo with in as its stdin.
func runDemoOn(t *testing.T, in *os.File, args ...string) (code int, stdout, stderr string, copyDir string) {
	t.Helper()
	outF, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer outF.Close()
	// A copy of the demo with its script's streaming delay removed, so the tests run fast.
	demo := t.TempDir()
	if err := os.CopyFS(demo, os.DirFS("../../testdata/demo")); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(demo, "replay.json"))
	if err != nil {
		t.Fatal(err)
	}
	script = regexp.MustCompile(`"chunkDelayMs": \d+`).ReplaceAll(script, []byte(`"chunkDelayMs": 0`))
	if err := os.WriteFile(filepath.Join(demo, "replay.json"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	code = execMain(append([]string{"--demo", "--demo-dir", demo}, args...), in, outF, &errb)
	b, _ := os.ReadFile(outF.Name())
	m := regexp.MustCompile(`copied to (\S+) `).FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("no demo copy announced; stderr:\n%s", errb.String())
	}
	t.Cleanup(func() { os.RemoveAll(m[1]) })
	return code, string(b), errb.String(), m[1]
}

func TestExecDemoAutoFixesTheCopy(t *testing.T) {
	execEnv(t)
	orig, err := os.ReadFile("../../testdata/demo/project/stats.go")
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	code, out, errs, dir := runDemo(t, "--mode", "auto", "--trace", trace)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"thinking:", "Read stats.go", "Edit stats.go", "+\tfor _, x := range xs {", "-\tfor i := 1; i < len(xs); i++ {", "`Mean` in `stats.go` skipped", "It now ranges"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not applied") {
		t.Errorf("an applied edit was reported as refused:\n%s", out)
	}
	fixed, err := os.ReadFile(filepath.Join(dir, "stats.go"))
	if err != nil || !strings.Contains(string(fixed), "for _, x := range xs {") {
		t.Fatalf("the copy was not fixed: %s %v", fixed, err)
	}
	if now, _ := os.ReadFile("../../testdata/demo/project/stats.go"); !bytes.Equal(now, orig) {
		t.Fatal("the repository's demo was modified")
	}
	tr, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(tr), `"kind":"tool_call"`) || !strings.Contains(string(tr), `"kind":"provider"`) {
		t.Fatalf("trace: %v\n%s", err, tr)
	}
}

func TestExecDeniesWithoutATerminal(t *testing.T) {
	execEnv(t)
	code, out, errs, dir := runDemo(t)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "✗ Edit stats.go") || !strings.Contains(out, "shows no permission prompts") {
		t.Errorf("the edit was not shown as refused:\n%s", out)
	}
	// The replay branches on the refusal instead of claiming the fix.
	if !strings.Contains(out, "The edit was not applied") || strings.Contains(out, "It now ranges") {
		t.Errorf("the answer does not follow the refusal:\n%s", out)
	}
	if !strings.HasSuffix(errs, "agentd: The demo's copy is in "+dir+": look at stats.go there, or run `go test ./...` in it. Delete it when you are done.\n") {
		t.Errorf("the run does not end by saying where the copy is:\n%s", errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "stats.go")); !strings.Contains(string(b), "for i := 1;") {
		t.Fatal("the file was edited without permission")
	}
}

func TestExecJSONStreamsEventsAndResult(t *testing.T) {
	execEnv(t)
	code, out, errs, _ := runDemo(t, "--json", "--mode", "auto")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	var kinds []string
	var last map[string]json.RawMessage
	for sc.Scan() {
		var line map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not NDJSON: %q", sc.Text())
		}
		last = line
		if u, ok := line["update"]; ok {
			var su protocol.SessionUpdate
			if err := json.Unmarshal(u, &su); err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, su.SessionUpdate)
		}
	}
	var res protocol.PromptResult
	if err := json.Unmarshal(last["result"], &res); err != nil || res.StopReason != protocol.StopEndTurn {
		t.Fatalf("last line is not the result: %v %+v", err, last)
	}
	joined := strings.Join(kinds, ",")
	for _, k := range []string{"agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update", "usage_update"} {
		if !strings.Contains(joined, k) {
			t.Errorf("no %s event", k)
		}
	}
}

func TestExecUsage(t *testing.T) {
	execEnv(t)
	var errb bytes.Buffer
	if code := execMain([]string{"--mode", "yolo", "x"}, os.Stdin, os.Stdout, &errb); code != exitUsage {
		t.Fatalf("exit %d", code)
	}
	if code := execMain(nil, os.Stdin, os.Stdout, &errb); code != exitUsage {
		t.Fatalf("exit %d without a prompt", code)
	}
	if code := execMain([]string{"fix", "it", "--mode", "yolo"}, os.Stdin, os.Stdout, &errb); code != exitUsage || !strings.Contains(errb.String(), `--mode "yolo"`) {
		t.Fatalf("a flag after the prompt was not parsed: exit %d, %s", code, errb.String())
	}
}

// An error may quote a settings file or a server: it reaches the terminal escaped, its lines
// indented under the first.
func TestPrintErrEscapes(t *testing.T) {
	var b bytes.Buffer
	printErr(&b, "agentd exec", errors.New("unknown key \"mode\x1b[8m\u202e\"\nagentd: fake line\n"))
	want := "agentd exec: unknown key \"mode\\x1b[8m\\u202e\"\n  agentd: fake line\n"
	if b.String() != want {
		t.Fatalf("printed %q, want %q", b.String(), want)
	}
}
