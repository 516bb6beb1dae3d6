package acceptance_test

// Issue 19 item 5: a deletion's diff, like every diff of the contract, has oldText and newText.

import (
	"os"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
)

// delete_path's diff is {path, oldText: the whole file, newText: ""} in a tool call of kind
// delete, in the permission request and in the call's final update.
func TestDeletePathDiffHasEmptyNewText(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "d", "name": "delete_path", "args": map[string]any{"path": "gone.txt"}}}},
		map[string]any{"text": "done"},
	)))
	path := e.writeFile("gone.txt", "one\ntwo\n")
	sid := e.newSession()
	e.ed.AnswerPermissions("allow_once")
	if res := e.prompt(sid, "delete it"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("gone.txt still exists: %v", err)
	}
	want := func(where string, d map[string]any) {
		t.Helper()
		if d == nil || d["path"] != path || d["oldText"] != "one\ntwo\n" {
			t.Errorf("%s: diff = %v, want the whole old file", where, d)
			return
		}
		if nt, ok := d["newText"]; !ok || nt != "" {
			t.Errorf("%s: diff newText = %#v (present %v), want \"\"", where, nt, ok)
		}
	}
	var kind any
	var final map[string]any
	for _, u := range e.rawUpdates(sid) {
		id, _ := u["toolCallId"].(string)
		if !strings.HasPrefix(id, "d") {
			continue
		}
		if u["sessionUpdate"] == "tool_call" {
			kind = u["kind"]
		}
		if u["status"] == "completed" {
			final = u
		}
	}
	if kind != "delete" {
		t.Errorf("tool call kind = %v, want delete", kind)
	}
	want("final update", findDiff(final))
	asked := 0
	for _, f := range e.sent() {
		if f.Method == "agent/session/request_permission" {
			asked++
			p := mustJSON(t, f.Params)
			tc, _ := p["toolCall"].(map[string]any)
			want("permission request", findDiff(tc))
		}
	}
	if asked != 1 {
		t.Errorf("%d permission requests, want 1", asked)
	}
}
