package acceptance_test

// Reverse requests have a deadline (the editorTimeoutSeconds setting) that fails the tool call
// waiting on it, never the turn; a permission question has its own, far longer one.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/protocol"
)

// withSetting adds one key to a settings object.
func withSetting(t *testing.T, settings json.RawMessage, key string, value any) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(settings, &m); err != nil {
		t.Fatal(err)
	}
	m[key] = value
	b, _ := json.Marshal(m)
	return b
}

func TestEditorThatNeverAnswersFailsTheToolCallNotTheTurn(t *testing.T) {
	t.Parallel()
	opts := fakeeditor.Full()
	opts.Unanswered = []string{protocol.MethodReadTextFile}
	e := start(t, opts, withSetting(t, replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "r", "name": "read_file", "args": map[string]any{"path": "a.txt"}}}},
		map[string]any{"text": "The editor did not answer."},
	)), "editorTimeoutSeconds", 1))
	e.writeFile("a.txt", "hello\n")
	sid := e.newSession()
	if res := e.prompt(sid, "read a.txt"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason = %q, want end_turn: the turn goes on after the tool call fails", res.StopReason)
	}
	var last map[string]any
	for _, u := range kinds(e.rawUpdates(sid), "tool_call_update") {
		last = u
	}
	if last == nil || last["status"] != "failed" {
		t.Fatalf("last tool_call_update = %v, want the read failed", last)
	}
	if b, _ := json.Marshal(last); !strings.Contains(string(b), "no answer within 1s") {
		t.Errorf("the failed read does not say the editor did not answer in time: %s", b)
	}
	cancelled := false
	for _, f := range e.sent() {
		cancelled = cancelled || f.Method == "$/cancelRequest"
	}
	if !cancelled {
		t.Error("agentd did not send $/cancelRequest for the request it gave up on")
	}
}

// A permission question waits for a human: editorTimeoutSeconds does not apply to it.
func TestPermissionOutlastsTheEditorTimeout(t *testing.T) {
	t.Parallel()
	opts := fakeeditor.Full()
	opts.Permission = func(protocol.RequestPermissionParams) protocol.PermissionOutcome {
		time.Sleep(1500 * time.Millisecond) // longer than editorTimeoutSeconds, as a human takes
		return protocol.PermissionOutcome{Outcome: "selected", OptionID: protocol.OptionAllowOnce}
	}
	e := start(t, opts, withSetting(t, replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "c", "name": "create_file", "args": map[string]any{"path": "new.txt", "content": "hi\n"}}}},
		map[string]any{"text": "Created."},
	)), "editorTimeoutSeconds", 1))
	sid := e.newSession()
	if res := e.prompt(sid, "create new.txt"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
	if got, ok := e.ed.Lookup(e.root + "/new.txt"); !ok || got != "hi\n" {
		t.Errorf("new.txt = %q, %v: the answer that came after editorTimeoutSeconds was not honoured", got, ok)
	}
}
