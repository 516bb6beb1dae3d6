package acceptance_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// Through the binary: a beforeTool hook that exits 2 keeps an edit from running (no applyEdit,
// no question) and the model reads the hook's stderr as the reason; the hook got the event as
// JSON on stdin; an afterTool hook's output follows a read's result.
func TestBeforeToolHookBlocksAnEditAndAfterToolAddsContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seen := filepath.Join(dir, "stdin.json")
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_e", Name: "edit_file", Arguments: json.RawMessage(`{"path":"f.txt","edits":[{"old_text":"a","new_text":"b"}]}`)}}},
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_r", Name: "read_file", Arguments: json.RawMessage(`{"path":"f.txt"}`)}}},
		{Text: "done"},
	}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, map[string]any{"hooks": map[string]any{
		"beforeTool": []any{map[string]any{"match": "^edit_file$", "command": []string{"sh", "-c", "cat > " + seen + "; echo 'edits are frozen until the release' >&2; exit 2"}}},
		"afterTool":  []any{map[string]any{"match": "^read_file$", "command": []string{"sh", "-c", `echo '{"additionalContext": "formatter says: all clean"}'`}}},
	}}))
	path := e.writeFile("f.txt", "a\n")
	sid := e.newSession()
	e.setMode(sid, "auto")
	if res := e.prompt(sid, "edit f.txt"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	if n := len(e.rawApplyEdits()); n != 0 {
		t.Errorf("%d applyEdit requests after a blocking hook", n)
	}
	if got := e.ed.Text(path); got != "a\n" {
		t.Errorf("f.txt = %q after a blocked edit", got)
	}
	if f := finalUpdate(e, sid, "call_e"); f == nil || f["status"] != "failed" {
		t.Errorf("the blocked edit's final update = %v, want failed", f)
	}
	if got := toolResultText(t, fm, "call_e"); !strings.Contains(got, "edits are frozen until the release") || !strings.Contains(got, "did not run") {
		t.Errorf("the model did not read why: %s", got)
	}
	var in map[string]any
	b, err := os.ReadFile(seen)
	if err != nil || json.Unmarshal(b, &in) != nil {
		t.Fatalf("hook stdin %q: %v", b, err)
	}
	if in["event"] != "beforeTool" || in["tool"] != "edit_file" || in["sessionId"] != sid || in["cwd"] != e.root || obj(in, "input", "path") != "f.txt" {
		t.Errorf("hook stdin = %s", b)
	}
	if got := toolResultText(t, fm, "call_r"); !strings.Contains(got, "formatter says: all clean") || !strings.Contains(got, "a") {
		t.Errorf("the afterTool hook's context is not in the result: %s", got)
	}
}

// A hook that hangs is killed at its timeout with a notice, and the call it was for runs.
func TestHangingHookTimesOutWithANotice(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_r", Name: "read_file", Arguments: json.RawMessage(`{"path":"f.txt"}`)}}},
		{Text: "done"},
	}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, map[string]any{"hooks": map[string]any{
		"beforeTool": []any{map[string]any{"command": []string{"sh", "-c", "sleep 30; echo never"}, "timeoutMs": 300}},
	}}))
	e.writeFile("f.txt", "hello hooks\n")
	sid := e.newSession()
	if res := e.prompt(sid, "read"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	n := e.ed.WaitUpdate("hook notice", func(u protocol.SessionNotification) bool {
		return u.Update.SessionUpdate == protocol.UpdateNotice && u.Update.NoticeTitle == "Hook failed"
	})
	if !strings.Contains(n.Update.Description, "timeout") || !strings.Contains(n.Update.Description, "sh -c sleep 30") {
		t.Errorf("notice: %s", n.Update.Description)
	}
	if got := toolResultText(t, fm, "call_r"); !strings.Contains(got, "hello hooks") {
		t.Errorf("the read did not run after the hook timed out: %s", got)
	}
}

// Hooks in the project file run code a cloned repository chose: they are ignored (with the
// project settings notice naming them) unless the user trusts the project.
func TestProjectFileHookDoesNotRun(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	marker := filepath.Join(t.TempDir(), "ran")
	if err := os.MkdirAll(filepath.Join(root, ".agentd"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"beforeTool":   []any{map[string]any{"command": []string{"touch", marker}}},
		"sessionStart": []any{map[string]any{"command": []string{"touch", marker}}},
	}})
	if err := os.WriteFile(filepath.Join(root, ".agentd", "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_r", Name: "read_file", Arguments: json.RawMessage(`{"path":"f.txt"}`)}}},
		{Text: "done"},
	}, Routes: titleRoute})
	e := startIn(t, fakeeditor.Full(), openaiSettings(url, nil), "", root)
	sid := e.newSession()
	n := e.ed.WaitUpdate("project notice", func(u protocol.SessionNotification) bool {
		return u.Update.SessionUpdate == protocol.UpdateNotice && u.Update.NoticeTitle == "Project settings ignored"
	})
	if !strings.Contains(n.Update.Description, "hooks") {
		t.Errorf("the notice does not name hooks: %s", n.Update.Description)
	}
	if res := e.prompt(sid, "read"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a project file's hook ran")
	}
}

// sessionStart and promptSubmit hooks add context to what the model reads of the first prompt;
// a promptSubmit hook that exits 2 keeps a prompt from the model with a notice; a stop hook that
// blocks asks the model for one more step, once.
func TestPromptSessionAndStopHooks(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "stopped-once")
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{Text: "first answer"},
		{Text: "ran the tests"},
	}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, map[string]any{"hooks": map[string]any{
		"sessionStart": []any{map[string]any{"command": []string{"echo", "start-context-42"}}},
		"promptSubmit": []any{map[string]any{"command": []string{"sh", "-c", `p=$(cat); case "$p" in *forbidden*) echo "that word is not allowed" >&2; exit 2;; esac; echo '{"additionalContext": "ticket ABC-1"}'`}}},
		"stop":         []any{map[string]any{"command": []string{"sh", "-c", "if [ -e " + marker + " ]; then exit 0; fi; touch " + marker + "; echo 'run the tests first' >&2; exit 2"}}},
	}}))
	sid := e.newSession()
	if res := e.prompt(sid, "hello"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	if res := e.prompt(sid, "say the forbidden word"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	n := e.ed.WaitUpdate("prompt blocked notice", func(u protocol.SessionNotification) bool {
		return u.Update.SessionUpdate == protocol.UpdateNotice && u.Update.NoticeTitle == "Prompt blocked by a hook"
	})
	if !strings.Contains(n.Update.Description, "that word is not allowed") {
		t.Errorf("notice: %s", n.Update.Description)
	}
	reqs := mainRequests(t, fm)
	if len(reqs) != 2 {
		t.Fatalf("%d chat requests, want 2 (the answer, the step the stop hook asked for; the blocked prompt none)", len(reqs))
	}
	if user := newestUser(t, reqs[0]); !strings.Contains(user, "start-context-42") || !strings.Contains(user, "ticket ABC-1") || !strings.Contains(user, "hello") {
		t.Errorf("the first request lacks the hooks' context:\n%s", user)
	}
	if user := newestUser(t, reqs[1]); !strings.Contains(user, "run the tests first") {
		t.Errorf("the stop hook's reason did not reach the model:\n%s", user)
	}
	for _, r := range reqs {
		if strings.Contains(string(mustMarshal(r.Messages)), "forbidden") {
			t.Error("a blocked prompt reached the model")
		}
	}
}

// A hook sees no provider key: what it prints reaches the model, like a program's output.
func TestHooksDoNotSeeProviderKeys(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_r", Name: "read_file", Arguments: json.RawMessage(`{"path":"f.txt"}`)}}},
		{Text: "done"},
	}, Routes: titleRoute})
	raw := openaiSettings(url, map[string]any{"hooks": map[string]any{
		"afterTool": []any{map[string]any{"command": []string{"sh", "-c", `cat >/dev/null; echo "a=$ANTHROPIC_API_KEY o=$OPENAI_API_KEY"`}}},
	}})
	e := startWithEnv(t, fakeeditor.Full(), raw, "ANTHROPIC_API_KEY=sk-ant-secret", "OPENAI_API_KEY=sk-oai-secret")
	e.writeFile("f.txt", "x\n")
	sid := e.newSession()
	e.prompt(sid, "read")
	got := toolResultText(t, fm, "call_r")
	if !strings.Contains(got, "a= o=") || strings.Contains(got, "-secret") {
		t.Fatalf("the hook's output: %s", got)
	}
}
