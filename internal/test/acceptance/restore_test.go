package acceptance_test

// PROTOCOL.md "Review, checkpoints and rewind": agent/x/checkpoints/restore and /undo through
// the real binary.

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

func editCall(id, path, old, new string) fakemodel.ToolCall {
	args, _ := json.Marshal(map[string]any{"path": path, "edits": []any{map[string]any{"old_text": old, "new_text": new}}})
	return fakemodel.ToolCall{ID: id, Name: "edit_file", Arguments: args}
}

// Two turns change files; the user changes a line of their own; restoring the first turn's
// checkpoint ("both") undoes both turns with one workspace/applyEdit, keeps the user's line,
// drops both turns from the conversation, and the next turn tells the model what was restored.
func TestRestoreAnOlderCheckpointThroughTheBinary(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{editCall("e1", "f.txt", "one", "ONE"), {ID: "c1", Name: "create_file", Arguments: json.RawMessage(`{"path":"new.txt","content":"fresh\n"}`)}}},
		{Text: "first done"},
		{ToolCalls: []fakemodel.ToolCall{editCall("e2", "f.txt", "three", "THREE"), {ID: "r2", Name: "rename_path", Arguments: json.RawMessage(`{"path":"g.txt","new_name":"h.txt"}`)}}},
		{Text: "second done"},
		{Text: "noted"},
	}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	f := e.writeFile("f.txt", "one\ntwo\nthree\nfour\nfive\n")
	g := e.writeFile("g.txt", "gee\n")
	sid := e.newSession()
	e.setMode(sid, "auto")
	e.prompt(sid, "first")
	e.prompt(sid, "second")
	if got := e.ed.Text(f); got != "ONE\ntwo\nTHREE\nfour\nfive\n" {
		t.Fatalf("f.txt after the turns = %q", got)
	}
	// The user's own change, unsaved in the editor.
	e.ed.Edit(f, "ONE\ntwo\nTHREE\nfour\nfive, by the user\n")

	var list protocol.CheckpointListResult
	if err := e.ed.Call(ctxT(t), "agent/x/checkpoints/list", map[string]any{"sessionId": sid}, &list); err != nil || len(list.Checkpoints) != 2 {
		t.Fatalf("checkpoints %+v %v", list, err)
	}
	edits := len(e.ed.AppliedEdits())
	var raw json.RawMessage
	if err := e.ed.Call(ctxT(t), "agent/x/checkpoints/restore", map[string]any{"sessionId": sid, "checkpointId": list.Checkpoints[1].CheckpointID, "restore": "both"}, &raw); err != nil {
		t.Fatalf("restore: %v", err)
	}
	var res protocol.CheckpointRestoreResult
	json.Unmarshal(raw, &res)
	dir := filepath.Dir(f)
	want := []protocol.RestoredFile{{Path: f, Restored: true}, {Path: g, Restored: true}, {Path: filepath.Join(dir, "new.txt"), Restored: true}}
	if !slices.Equal(res.Files, want) {
		t.Fatalf("restore answered %s, want %+v", raw, want)
	}
	if n := len(e.ed.AppliedEdits()) - edits; n != 1 {
		t.Fatalf("%d workspace/applyEdit for the restore, want 1", n)
	}
	for path, want := range map[string]string{f: "one\ntwo\nthree\nfour\nfive, by the user\n", g: "gee\n"} {
		if got := e.ed.Text(path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	for _, gone := range []string{"new.txt", "h.txt"} {
		if _, ok := e.ed.Lookup(filepath.Join(dir, gone)); ok {
			t.Errorf("%s still exists", gone)
		}
	}

	e.prompt(sid, "what now?")
	reqs := mainRequests(t, fm)
	last := reqs[len(reqs)-1]
	var users []string
	for _, m := range last.Messages {
		if m.Role == "user" {
			users = append(users, string(m.Content))
		}
	}
	if len(users) != 1 || !strings.Contains(users[0], "what now?") || !strings.Contains(users[0], "The user restored files") || !strings.Contains(users[0], "new.txt") {
		t.Fatalf("the model's next request holds the user messages %q", users)
	}
}

// /undo restores the newest turn's files and answers without a model call; a restore's bad
// params are -32602 naming the field.
func TestUndoThroughTheBinary(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{editCall("e1", "f.txt", "one", "ONE")}},
		{Text: "done"},
	}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	f := e.writeFile("f.txt", "one\n")
	sid := e.newSession()
	e.setMode(sid, "auto")
	e.prompt(sid, "shout")
	n := len(mainRequests(t, fm))
	if res := e.prompt(sid, "/undo"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	if got := e.ed.Text(f); got != "one\n" {
		t.Fatalf("f.txt after /undo = %q", got)
	}
	if len(mainRequests(t, fm)) != n {
		t.Fatal("/undo called the model")
	}
	var said string
	for _, u := range kinds(e.rawUpdates(sid), "agent_message_chunk") {
		if c, ok := u["content"].(map[string]any); ok {
			said, _ = c["text"].(string)
		}
	}
	if !strings.Contains(said, "Restored:") || !strings.Contains(said, f) {
		t.Fatalf("/undo answered %q", said)
	}
	code, msg := e.callError("agent/x/checkpoints/restore", map[string]any{"sessionId": sid, "checkpointId": "cp_x", "restore": "everything"})
	if code != protocol.CodeInvalidParams || !strings.Contains(msg, "restore") {
		t.Fatalf("bad restore value: %d %s", code, msg)
	}
}
