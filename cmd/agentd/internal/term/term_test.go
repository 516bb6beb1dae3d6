package term

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
)

// newTest returns a client answering from answers, and what it wrote.
func newTest(answers string) (*Client, *bytes.Buffer) {
	var out bytes.Buffer
	return New(Options{Out: &out, Err: &out, In: strings.NewReader(answers), Ask: true}), &out
}

var options = []protocol.PermissionOption{
	{OptionID: "allow_once", Name: "Allow once", Kind: "allow_once"},
	{OptionID: "allow_session", Name: "Allow for this session", Kind: "allow_always"},
	{OptionID: "reject_once", Name: "Reject", Kind: "reject_once"},
}

func ask(t *testing.T, c *Client, p protocol.RequestPermissionParams) protocol.PermissionOutcome {
	t.Helper()
	if p.Options == nil {
		p.Options = options
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.RequestPermission(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return res.Outcome
}

func noEscapes(t *testing.T, out string) {
	t.Helper()
	for _, r := range out {
		if r == 0x1b || r == '\r' || (r >= 0x80 && r <= 0x9f) || isBidiControl(r) {
			t.Fatalf("output holds %U:\n%s", r, out)
		}
	}
}

// The attack that was found: ESC[8m in a command hid the rest of it in the prompt, and Enter
// chose "Allow once".
func TestPermissionPromptShowsAHiddenCommand(t *testing.T) {
	c, out := newTest("\n3\n")
	argv := []string{"sh", "-c", "echo hi\x1b[8m; touch ~/pwned"}
	raw, _ := json.Marshal(map[string]any{"command": argv, "cwd": "/p"})
	got := ask(t, c, protocol.RequestPermissionParams{ToolCall: protocol.SessionUpdate{
		ToolCallID: "c1", Title: "Run sh -c 'echo hi\x1b[8m; touch ~/pwned'", RawInput: raw}})
	if got.OptionID != "reject_once" {
		t.Fatalf("outcome %+v", got)
	}
	noEscapes(t, out.String())
	for _, want := range []string{
		`Permission needed: Run sh -c 'echo hi\x1b[8m; touch ~/pwned'`,
		`$ sh -c $'echo hi\x1b[8m; touch ~/pwned'`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("prompt lacks %s:\n%s", want, out)
		}
	}
}

func TestEnterAloneDoesNotApprove(t *testing.T) {
	c, out := newTest("\n  \n2\n")
	if got := ask(t, c, protocol.RequestPermissionParams{ToolCall: protocol.SessionUpdate{Title: "Edit f"}}); got.OptionID != "allow_session" {
		t.Fatalf("outcome %+v", got)
	}
	if n := strings.Count(out.String(), "Choose 1-3: "); n != 3 {
		t.Errorf("asked %d times, want 3:\n%s", n, out)
	}
	if !strings.Contains(out.String(), "Enter alone chooses nothing") {
		t.Errorf("no hint after Enter alone:\n%s", out)
	}
}

func TestAnAnswerThatIsNotAnOptionAsksAgain(t *testing.T) {
	c, out := newTest("yes\n0\n4\n1x\n-1\n1\n")
	if got := ask(t, c, protocol.RequestPermissionParams{ToolCall: protocol.SessionUpdate{Title: "Edit f"}}); got.OptionID != "allow_once" {
		t.Fatalf("outcome %+v", got)
	}
	for _, bad := range []string{`"yes" is not an option`, `"0" is not an option`, `"4" is not an option`, `"1x" is not an option`, `"-1" is not an option`} {
		if !strings.Contains(out.String(), bad) {
			t.Errorf("output lacks %s:\n%s", bad, out)
		}
	}
}

func TestEndOfInputCancels(t *testing.T) {
	for _, in := range []string{"", "\n", "maybe\n", "maybe"} {
		c, _ := newTest(in)
		if got := ask(t, c, protocol.RequestPermissionParams{ToolCall: protocol.SessionUpdate{Title: "Edit f"}}); got.Outcome != "cancelled" {
			t.Errorf("input %q: outcome %+v", in, got)
		}
		// Every later question is cancelled too, without waiting.
		if got := ask(t, c, protocol.RequestPermissionParams{ToolCall: protocol.SessionUpdate{Title: "Edit g"}}); got.Outcome != "cancelled" {
			t.Errorf("input %q, second question: outcome %+v", in, got)
		}
	}
}

// A question given up when the turn is cancelled does not eat the answer to the next one.
func TestCancelledQuestionKeepsTheNextAnswer(t *testing.T) {
	r, w := io.Pipe()
	var out bytes.Buffer
	c := New(Options{Out: &out, Err: &out, In: r, Ask: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, _ := c.RequestPermission(ctx, protocol.RequestPermissionParams{Options: options}); res.Outcome.Outcome != "cancelled" {
		t.Fatalf("outcome %+v", res)
	}
	go fmt.Fprint(w, "3\n")
	if got := ask(t, c, protocol.RequestPermissionParams{ToolCall: protocol.SessionUpdate{Title: "Edit f"}}); got.OptionID != "reject_once" {
		t.Fatalf("outcome %+v", got)
	}
}

func TestBidiOverrideInAFileName(t *testing.T) {
	c, out := newTest("3\n")
	old, nu := "a\n", "b\n"
	name := "/p/invoice\u202etxt.exe" // shown raw, it reads "invoiceexe.txt"
	ask(t, c, protocol.RequestPermissionParams{ToolCall: protocol.SessionUpdate{Title: "Edit invoice\u202etxt.exe",
		ToolContent: []protocol.ToolCallContent{{Type: "diff", Path: name, OldText: &old, NewText: &nu}}}})
	noEscapes(t, out.String())
	for _, want := range []string{`Edit invoice\u202etxt.exe`, `--- "a/p/invoice\u202etxt.exe"`, `+++ "b/p/invoice\u202etxt.exe"`, "-a", "+b"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

func TestNewlineInATitle(t *testing.T) {
	c, out := newTest("")
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCall, ToolCallID: "c1", Title: "Read a.go\n  ✓ Edit b.go"})
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: "c1", Status: protocol.StatusInProgress})
	if got, want := out.String(), "▸ Read a.go\\n  ✓ Edit b.go\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func TestModelTextIsEscaped(t *testing.T) {
	c, out := newTest("")
	text := func(s string) *protocol.ContentBlock { return &protocol.ContentBlock{Type: "text", Text: s} }
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentThoughtChunk, Content: text("hmm\x1b]0;title\x07")})
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, Content: text("line\n\tcode \x1b[2J\u2067")})
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateNotice, Severity: "warning", NoticeTitle: "t\x1b[31m", Description: "d\u202e"})
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdatePlan, Entries: []protocol.PlanEntry{{Content: "step\nfake", Status: "pending"}}})
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCall, ToolCallID: "c1", Title: "x"})
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: "c1", Status: protocol.StatusFailed,
		ToolContent: []protocol.ToolCallContent{{Type: "content", Content: text("no\x1b[8m")}}})
	c.Result(protocol.PromptResult{StopReason: "refusal", Meta: protocol.Meta{"agentd/error": protocol.ErrorMeta{Kind: "server", Message: "bad\x9b"}}})
	noEscapes(t, out.String())
	for _, want := range []string{`hmm\x1b]0;title\x07`, "line\n\tcode \\x1b[2J\\u2067", `[warning] t\x1b[31m: d\u202e`, `[ ] step\nfake`, `✗ x: no\x1b[8m`, `failed (server): bad\x9b`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestFinishedProgramShowsExitCodeAndLastLines(t *testing.T) {
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, fmt.Sprintf("out %d", i))
	}
	lines[19] = "FAIL\x1b[8m hidden"
	raw, _ := json.Marshal(map[string]any{"exitCode": 1, "timedOut": false, "output": strings.Join(lines, "\n") + "\n"})
	c, out := newTest("")
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCall, ToolCallID: "c1", Title: "Run go test"})
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: "c1", Status: protocol.StatusCompleted, RawOutput: raw})
	want := "  ✗ Run go test (exit code 1)\n    … 12 earlier lines\n" +
		"    out 13\n    out 14\n    out 15\n    out 16\n    out 17\n    out 18\n    out 19\n    FAIL\\x1b[8m hidden\n"
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}

	raw, _ = json.Marshal(map[string]any{"exitCode": 0, "output": "ok\n"})
	c, out = newTest("")
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: "c2", Title: "Run true", Status: protocol.StatusCompleted, RawOutput: raw})
	if want := "  ✓ Run true (exit code 0)\n    ok\n"; out.String() != want {
		t.Fatalf("output %q, want %q", out, want)
	}

	raw, _ = json.Marshal(map[string]any{"exitCode": -1, "timedOut": true, "output": ""})
	c, out = newTest("")
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: "c3", Title: "Run sleep 99", Status: protocol.StatusFailed, RawOutput: raw})
	if want := "  ✗ Run sleep 99 (timed out, killed)\n"; out.String() != want {
		t.Fatalf("output %q, want %q", out, want)
	}
}

// Issue 26 item 10: a newline in a file name made the diff header two lines, the second one
// posing as agentd's own (a fake "+++" or a fake hunk); a zero-width character made two names
// look the same. The header names are quoted and escaped as git quotes them, on one line each.
func TestDiffHeaderQuotesNewlineAndZeroWidthNames(t *testing.T) {
	for _, tc := range []struct{ name, from, to string }{
		{"/p/a.go\n+++ b/p/evil.go", `--- "a/p/a.go\n+++ b/p/evil.go"`, `+++ "b/p/a.go\n+++ b/p/evil.go"`},
		{"/p/ma\u200bin.go", `--- "a/p/ma\u200bin.go"`, `+++ "b/p/ma\u200bin.go"`},
		{"/p/bom\ufeff\u2060.go", `--- "a/p/bom\ufeff\u2060.go"`, `+++ "b/p/bom\ufeff\u2060.go"`},
		{`/p/back\slash"q.go`, `--- "a/p/back\\slash\"q.go"`, `+++ "b/p/back\\slash\"q.go"`},
		{"/p/plain.go", "--- a/p/plain.go", "+++ b/p/plain.go"},
	} {
		c, out := newTest("3\n")
		old, nu := "a\n", "b\n"
		ask(t, c, protocol.RequestPermissionParams{ToolCall: protocol.SessionUpdate{Title: "Edit",
			ToolContent: []protocol.ToolCallContent{{Type: "diff", Path: tc.name, OldText: &old, NewText: &nu}}}})
		noEscapes(t, out.String())
		lines := strings.Split(out.String(), "\n")
		var headers []string
		for _, l := range lines {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "+++ ") {
				headers = append(headers, t)
			}
		}
		if len(headers) != 2 || headers[0] != tc.from || headers[1] != tc.to {
			t.Errorf("%q: headers %q, want %q and %q\n%s", tc.name, headers, tc.from, tc.to, out)
		}
		for _, r := range out.String() {
			if r == '\u200b' || r == '\ufeff' || r == '\u2060' {
				t.Errorf("%q: output holds the invisible %U", tc.name, r)
			}
		}
	}
}

// A program's variables and input change what it does (LD_PRELOAD, GIT_CONFIG_*, `python3 -`),
// so agentd exec shows them when it asks, escaped like the command.
func TestPermissionPromptShowsEnvAndStdin(t *testing.T) {
	c, out := newTest("3\n")
	raw, _ := json.Marshal(map[string]any{
		"command": []string{"python3", "-"}, "cwd": "/p",
		"env":   map[string]string{"LD_PRELOAD": "/tmp/evil.so", "GIT_CONFIG_VALUE_0": "a b\x1b[8m"},
		"stdin": "import os\nos.system('touch ~/pwned')\x1b[8m\n",
	})
	got := ask(t, c, protocol.RequestPermissionParams{ToolCall: protocol.SessionUpdate{
		ToolCallID: "c1", Title: "Run python3 -", RawInput: raw}})
	if got.OptionID != "reject_once" {
		t.Fatalf("outcome %+v", got)
	}
	noEscapes(t, out.String())
	for _, want := range []string{
		"$ python3 -",
		"env GIT_CONFIG_VALUE_0=$'a b\\x1b[8m'",
		"env LD_PRELOAD=/tmp/evil.so",
		"stdin (41 bytes):",
		"      import os\n      os.system('touch ~/pwned')\\x1b[8m\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("prompt lacks %q:\n%s", want, out)
		}
	}
}
