package acceptance_test

// PROTOCOL.md "Review, checkpoints and rewind": a denial with an instruction, the turn's changes
// and fork, through the real binary.

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// toolResultText is what the model last read as the result of call id.
func toolResultText(t *testing.T, fm *fakemodel.Server, id string) string {
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
			if m.Role == "tool" && m.ToolCallID == id {
				if s, ok := m.Content.(string); ok {
					result = s
				} else {
					result = string(mustMarshal(m.Content))
				}
			}
		}
	}
	return result
}

func TestRejectOnceWithInstructionReachesModel(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_e", Name: "edit_file", Arguments: json.RawMessage(`{"path":"f.txt","edits":[{"old_text":"a","new_text":"b"}]}`)}}},
		{Text: "Using a map then."},
	}, Routes: titleRoute})
	const instruction = "No — use a map keyed by name."
	opts := fakeeditor.Full()
	opts.Permission = func(protocol.RequestPermissionParams) protocol.PermissionOutcome {
		return protocol.PermissionOutcome{Outcome: "selected", OptionID: "reject_once", Meta: protocol.Meta{"agentd/instruction": instruction}}
	}
	e := start(t, opts, openaiSettings(url, nil))
	path := e.writeFile("f.txt", "a\n")
	sid := e.newSession()
	if res := e.prompt(sid, "edit"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	if got := e.ed.Text(path); got != "a\n" {
		t.Errorf("file = %q after a rejection", got)
	}
	if got := toolResultText(t, fm, "call_e"); !strings.Contains(got, instruction) {
		t.Errorf("the model read %q, want the instruction %q verbatim", got, instruction)
	}
	if n := len(mainRequests(t, fm)); n != 2 {
		t.Errorf("%d model requests, want 2: the turn goes on after the denial", n)
	}
}

func TestPromptAnswerCarriesTheTurnsChanges(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{
			map[string]any{"id": "e", "name": "edit_file", "args": map[string]any{"path": "f.txt", "edits": []any{map[string]any{"old_text": "two", "new_text": "TWO\nTWO-B"}}}},
			map[string]any{"id": "c", "name": "create_file", "args": map[string]any{"path": "new.txt", "content": "x\ny\n"}},
			map[string]any{"id": "d", "name": "delete_path", "args": map[string]any{"path": "old.txt"}},
			map[string]any{"id": "r", "name": "rename_path", "args": map[string]any{"path": "g.txt", "new_name": "h.txt"}},
		}},
		map[string]any{"text": "done"},
	)))
	f := e.writeFile("f.txt", "one\ntwo\nthree\n")
	old := e.writeFile("old.txt", "1\n2\n3\n")
	g := e.writeFile("g.txt", "gee\n")
	sid := e.newSession()
	e.setMode(sid, "auto")
	res := e.prompt(sid, "change things")
	raw, _ := json.Marshal(res.Meta["agentd/changes"])
	var got []protocol.FileChange
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("_meta[agentd/changes] = %s: %v", raw, err)
	}
	dir := strings.TrimSuffix(f, "f.txt")
	want := []protocol.FileChange{
		{Path: f, Change: "modified", Added: 2, Removed: 1},
		{Path: dir + "new.txt", Change: "created", Added: 2},
		{Path: old, Change: "deleted", Removed: 3},
		{Path: dir + "h.txt", Change: "renamed", From: g},
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes\n got %+v\nwant %+v", got, want)
	}
	var list protocol.CheckpointListResult
	if err := e.ed.Call(ctxT(t), "agent/x/checkpoints/list", map[string]any{"sessionId": sid}, &list); err != nil {
		t.Fatalf("agent/x/checkpoints/list: %v", err)
	}
	if len(list.Checkpoints) != 1 || list.Checkpoints[0].Prompt != "change things" || list.Checkpoints[0].CheckpointID == "" {
		t.Fatalf("checkpoints = %+v, want the one turn", list)
	}
	var files []protocol.FileChange
	for _, f := range list.Checkpoints[0].Files {
		files = append(files, protocol.FileChange{Path: f.Path, Change: f.Change, From: f.From})
	}
	for i := range want {
		want[i].Added, want[i].Removed = 0, 0
	}
	if !slices.Equal(files, want) {
		t.Errorf("checkpoint files\n got %+v\nwant %+v", files, want)
	}
}

func TestForkCopiesTheConversation(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "first"}, {Text: "side"}}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	sid := e.newSession()
	e.prompt(sid, "main question")
	var res protocol.SessionForkResult
	if err := e.ed.Call(ctxT(t), "agent/session/fork", map[string]any{"sessionId": sid}, &res); err != nil {
		t.Fatalf("agent/session/fork: %v", err)
	}
	if res.SessionID == "" || res.SessionID == sid {
		t.Fatalf("fork answered sessionId %q", res.SessionID)
	}
	e.prompt(res.SessionID, "side question")
	reqs := mainRequests(t, fm)
	body, _ := json.Marshal(reqs[len(reqs)-1])
	if !strings.Contains(string(body), "main question") || !strings.Contains(string(body), "first") {
		t.Errorf("the fork's first request lacks the copied history: %s", body)
	}
	if code, _ := e.callError("agent/session/fork", map[string]any{"sessionId": "sess_missing"}); code != -32002 {
		t.Errorf("fork of an unknown session answered %d, want -32002", code)
	}
}
