package acceptance_test

// PROTOCOL.md "agentd → client requests": workspace/applyEdit, edits staying unsaved,
// agent/x/save_buffers before exec tools.

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// rawApplyEdits returns the params of every workspace/applyEdit agentd sent.
func (e *env) rawApplyEdits() []map[string]any { return e.rawSent(protocol.MethodApplyEdit) }

// The TextDocumentEdit carries the version the read returned (null for a file read from disk
// without a version); the edit lands in the buffer and stays unsaved; the disk is untouched.
func TestApplyEditVersionedAndUnsaved(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{
			map[string]any{"id": "r1", "name": "read_file", "args": map[string]any{"path": "open.txt"}},
			map[string]any{"id": "r2", "name": "read_file", "args": map[string]any{"path": "closed.txt"}},
		}},
		map[string]any{"toolCalls": []any{
			map[string]any{"id": "e1", "name": "edit_file", "args": map[string]any{"path": "open.txt", "edits": []any{map[string]any{"old_text": "typed", "new_text": "edited"}}}},
			map[string]any{"id": "e2", "name": "edit_file", "args": map[string]any{"path": "closed.txt", "edits": []any{map[string]any{"old_text": "disk", "new_text": "edited"}}}},
		}},
		map[string]any{"text": "done"},
	)))
	open := e.writeFile("open.txt", "saved text\n")
	closed := e.writeFile("closed.txt", "disk text\n")
	e.ed.OpenFile(open)
	e.ed.Edit(open, "typed text\n") // version 2, unsaved
	e.ed.Edit(open, "typed text\n") // version 3
	sid := e.newSession()
	e.setMode(sid, "auto")
	if res := e.prompt(sid, "edit both"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	versions := map[string]any{}
	found := map[string]bool{}
	for _, ae := range e.rawApplyEdits() {
		if l, _ := ae["label"].(string); l == "" {
			t.Errorf("applyEdit without a label: %v", ae)
		}
		dcs, ok := obj(ae, "edit", "documentChanges").([]any)
		if !ok {
			t.Errorf("applyEdit without documentChanges (the client supports them): %v", ae)
			continue
		}
		for _, dc := range dcs {
			td, _ := obj(dc, "textDocument").(map[string]any)
			if td == nil {
				continue
			}
			uri, _ := td["uri"].(string)
			if !strings.HasPrefix(uri, "file://") {
				t.Errorf("textDocument.uri %q is not a file:// URI", uri)
			}
			v, has := td["version"]
			if !has {
				t.Errorf("TextDocumentEdit for %s without a version key (OptionalVersionedTextDocumentIdentifier)", uri)
			}
			versions[uri] = v
			found[uri] = true
		}
	}
	openURI, closedURI := editorbridge.FileURI(open), editorbridge.FileURI(closed)
	if !found[openURI] || versions[openURI] != float64(3) {
		t.Errorf("edit of the open buffer carries version %v, want 3 (the version the read returned)", versions[openURI])
	}
	if !found[closedURI] || versions[closedURI] != nil {
		t.Errorf("edit of a file read from disk carries version %v, want null", versions[closedURI])
	}
	if got := e.ed.Text(open); got != "edited text\n" {
		t.Errorf("open buffer = %q", got)
	}
	if !e.ed.Dirty(open) {
		t.Error("the edited buffer is saved; edits must stay unsaved")
	}
	if b, _ := os.ReadFile(open); string(b) != "saved text\n" {
		t.Errorf("disk behind the open buffer = %q: written behind the editor's back", b)
	}
	if b, _ := os.ReadFile(closed); string(b) != "disk text\n" {
		t.Errorf("disk of the closed file = %q: written behind the editor's back", b)
	}
	if got := e.ed.Text(closed); got != "edited text\n" {
		t.Errorf("closed file as the editor shows it = %q", got)
	}
}

// applied:false: the call fails and the model is told so and to re-read.
func TestApplyEditRefused(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_e", Name: "edit_file", Arguments: json.RawMessage(`{"path":"f.txt","edits":[{"old_text":"a","new_text":"b"}]}`)}}},
		{Text: "I will re-read it."},
	}, Routes: []fakemodel.Route{{Match: `"tools":null`, Turn: fakemodel.Turn{Text: "Title"}}}})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	path := e.writeFile("f.txt", "a\n")
	e.ed.RefuseEdits("the document changed")
	sid := e.newSession()
	e.setMode(sid, "auto")
	if res := e.prompt(sid, "edit"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	if len(e.rawApplyEdits()) == 0 {
		t.Fatal("no workspace/applyEdit was sent")
	}
	if f := finalUpdate(e, sid, "call_e"); f == nil || f["status"] != "failed" {
		t.Errorf("the refused edit's final update = %v, want failed", f)
	}
	if got := e.ed.Text(path); got != "a\n" {
		t.Errorf("file = %q after a refused edit", got)
	}
	var result string
	for _, body := range fm.Requests() {
		var req struct {
			Messages []struct {
				Role       string `json:"role"`
				ToolCallID string `json:"tool_call_id"`
				Content    any    `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(body, &req)
		for _, m := range req.Messages {
			if m.Role == "tool" && m.ToolCallID == "call_e" {
				result = strings.ToLower(string(mustMarshal(m.Content)))
			}
		}
	}
	if result == "" {
		t.Fatal("the model never got the edit's tool result")
	}
	if !strings.Contains(result, "re-read") && !strings.Contains(result, "read it again") && !strings.Contains(result, "read_file") {
		t.Errorf("the tool result does not tell the model to re-read: %s", result)
	}
	if !strings.Contains(result, "not applied") && !strings.Contains(result, "refused") && !strings.Contains(result, "the document changed") {
		t.Errorf("the tool result does not say the edit was not applied: %s", result)
	}
}

// Before an exec tool runs, agentd asks the editor to save the files it changed (and only
// those), so the program reads the edited text.
func TestSaveBuffersBeforeRunProgram(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "e", "name": "edit_file", "args": map[string]any{"path": "g.txt", "edits": []any{map[string]any{"old_text": "helo", "new_text": "hello"}}}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "p", "name": "run_program", "args": map[string]any{"command": []string{"cat", "g.txt"}}}}},
		map[string]any{"text": "done"},
	)))
	g := e.writeFile("g.txt", "helo\n")
	other := e.writeFile("other.txt", "mine\n")
	e.ed.OpenFile(other)
	e.ed.Edit(other, "user's unsaved text\n") // not agentd's change: must not be saved
	sid := e.newSession()
	e.setMode(sid, "auto")
	if res := e.prompt(sid, "fix and show"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	saves := e.ed.WaitRequest(protocol.MethodSaveBuffers, 1)
	var p protocol.SaveBuffersParams
	json.Unmarshal(saves[0].Params, &p)
	if p.SessionID != sid || !slices.Contains(p.Paths, g) {
		t.Errorf("save_buffers params = %+v, want the session and %s", p, g)
	}
	if slices.Contains(p.Paths, other) {
		t.Errorf("save_buffers asked to save %s, which agentd did not change", other)
	}
	if got := callText(e, sid, "p"); !strings.Contains(got, "hello") {
		t.Errorf("the program read %q, want the edited text", got)
	}
	if b, _ := os.ReadFile(g); string(b) != "hello\n" {
		t.Errorf("g.txt on disk = %q", b)
	}
	if !e.ed.Dirty(other) {
		t.Error("the user's own unsaved buffer was saved")
	}
}

// A client without agent/x/save_buffers gets a notice instead.
func TestNoSaveBuffersNotice(t *testing.T) {
	t.Parallel()
	opts := fakeeditor.Full()
	opts.Agent.SaveBuffers = false
	e := start(t, opts, replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "e", "name": "edit_file", "args": map[string]any{"path": "g.txt", "edits": []any{map[string]any{"old_text": "helo", "new_text": "hello"}}}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "p", "name": "run_program", "args": map[string]any{"command": []string{"cat", "g.txt"}}}}},
		map[string]any{"text": "done"},
	)))
	e.writeFile("g.txt", "helo\n")
	sid := e.newSession()
	e.setMode(sid, "auto")
	e.prompt(sid, "fix and show")
	if len(kinds(e.rawUpdates(sid), "notice")) == 0 {
		t.Error("no notice that the edited buffers could not be saved before the program")
	}
}

// A program the user rejects does not run, so nothing is saved for it: edits stay unsaved until
// the user saves them.
func TestRejectedProgramSavesNothing(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "e", "name": "edit_file", "args": map[string]any{"path": "g.txt", "edits": []any{map[string]any{"old_text": "helo", "new_text": "hello"}}}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "p", "name": "run_program", "args": map[string]any{"command": []string{"cat", "g.txt"}}}}},
		map[string]any{"text": "done"},
	)))
	g := e.writeFile("g.txt", "helo\n")
	e.ed.AnswerPermissions("allow_once", "reject_once")
	sid := e.newSession()
	if res := e.prompt(sid, "fix and show"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	if f := finalUpdate(e, sid, "p"); f == nil || f["status"] != "failed" {
		t.Errorf("the rejected program: %v, want failed", f)
	}
	for _, f := range e.sent() {
		if f.Method == protocol.MethodSaveBuffers {
			t.Errorf("agentd saved buffers for a program the user rejected: %s", f.Params)
		}
	}
	if b, _ := os.ReadFile(g); string(b) != "helo\n" {
		t.Errorf("g.txt on disk = %q, want the edit still unsaved", b)
	}
	if !e.ed.Dirty(g) {
		t.Error("the edited buffer was saved")
	}
}

// A client with applyEdit but without documentChanges gets WorkspaceEdit.changes: the edit still
// goes through the editor, never to disk behind its back.
func TestApplyEditWithoutDocumentChanges(t *testing.T) {
	t.Parallel()
	opts := fakeeditor.Full()
	opts.DocumentChanges = false
	opts.ResourceOps = nil
	e := start(t, opts, replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "x", "name": "edit_file", "args": map[string]any{"path": "f.txt",
			"edits": []any{map[string]any{"old_text": "old", "new_text": "new"}}}}}},
		map[string]any{"text": "done"},
	)))
	path := e.writeFile("f.txt", "old line\n")
	e.ed.OpenFile(path)
	sid := e.newSession()
	e.setMode(sid, "auto")
	e.prompt(sid, "edit")
	aes := e.rawApplyEdits()
	if len(aes) != 1 {
		t.Fatalf("%d applyEdit requests, want 1", len(aes))
	}
	if _, ok := obj(aes[0], "edit", "documentChanges").([]any); ok {
		t.Errorf("documentChanges sent to a client without workspaceEdit.documentChanges: %v", aes[0])
	}
	if _, ok := obj(aes[0], "edit", "changes").(map[string]any); !ok {
		t.Errorf("no WorkspaceEdit.changes: %v", aes[0])
	}
	if got := e.ed.Text(path); got != "new line\n" {
		t.Errorf("buffer = %q", got)
	}
	if b, _ := os.ReadFile(path); string(b) != "old line\n" {
		t.Errorf("disk = %q: written behind the editor's back", b)
	}
}
