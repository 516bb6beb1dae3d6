package acceptance_test

// PROTOCOL.md "Trust: who may set what": what the model may and may not cause, tried as an
// attacker would, through the real binary.

import (
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
)

// "Always reject" on one write tool covers the path for every write tool: the model cannot
// overwrite or delete the file it was refused to edit.
func TestRejectAlwaysCoversEveryWriteTool(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "edit", "name": "edit_file", "args": map[string]any{"path": "guarded.txt",
			"edits": []any{map[string]any{"old_text": "keep", "new_text": "gone"}}}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "create", "name": "create_file", "args": map[string]any{"path": "guarded.txt", "content": "gone", "overwrite": true}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "delete", "name": "delete_path", "args": map[string]any{"path": "guarded.txt"}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "move", "name": "rename_path", "args": map[string]any{"path": "guarded.txt", "new_name": "moved.txt"}}}},
		map[string]any{"text": "done"},
	)))
	path := e.writeFile("guarded.txt", "keep\n")
	e.ed.AnswerPermissions("reject_always")
	sid := e.newSession()
	e.prompt(sid, "change guarded.txt")
	if n := len(e.ed.PermissionRequests()); n != 1 {
		t.Errorf("%d permission requests, want 1 (the reject_always answers the rest)", n)
	}
	for _, id := range []string{"edit", "create", "delete", "move"} {
		if f := finalUpdate(e, sid, id); f == nil || f["status"] != "failed" {
			t.Errorf("call %s after reject_always: %v, want failed", id, f)
		}
	}
	if got, ok := e.ed.Lookup(path); !ok || got != "keep\n" {
		t.Errorf("guarded.txt = %q (exists %v), want it untouched", got, ok)
	}
}
