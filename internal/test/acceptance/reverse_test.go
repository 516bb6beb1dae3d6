package acceptance_test

// PROTOCOL.md "agentd → client requests" params, modes and their updates, titles, and what
// survives the end of input.

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// The reverse requests carry the contract's params: sessionId everywhere, absolute paths.
func TestReverseRequestParams(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{
			map[string]any{"id": "r", "name": "read_file", "args": map[string]any{"path": "src/a.go"}},
			map[string]any{"id": "d", "name": "get_diagnostics", "args": map[string]any{"paths": []string{"src/a.go"}}},
			map[string]any{"id": "s", "name": "find_symbol", "args": map[string]any{"query": "Widget"}},
		}},
		map[string]any{"text": "ok"},
	)))
	a := e.writeFile("src/a.go", "package src\n\ntype Widget struct{}\n")
	e.ed.OpenFile(a)
	e.ed.SetDiagnostics(a, []editorbridge.Diagnostic{})
	sid := e.newSession()
	if res := e.prompt(sid, "look"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	params := func(method string) []map[string]any {
		var out []map[string]any
		for _, f := range e.sent() {
			if f.Method == method {
				out = append(out, mustJSON(t, f.Params))
			}
		}
		return out
	}
	reads := params(protocol.MethodReadTextFile)
	if len(reads) == 0 {
		t.Fatal("read_file did not read through agent/fs/read_text_file")
	}
	for _, p := range reads {
		if p["sessionId"] != sid || p["path"] != a {
			t.Errorf("read_text_file params %v, want sessionId and the absolute path", p)
		}
	}
	for _, method := range []string{protocol.MethodDiagnostics, protocol.MethodWorkspaceSymbols} {
		ps := params(method)
		if len(ps) == 0 {
			t.Errorf("no %s request", method)
		}
		for _, p := range ps {
			if p["sessionId"] != sid {
				t.Errorf("%s params %v without the sessionId", method, p)
			}
			if paths, ok := p["paths"].([]any); ok {
				for _, x := range paths {
					if s, _ := x.(string); !filepath.IsAbs(s) {
						t.Errorf("%s path %v is not absolute", method, x)
					}
				}
			}
		}
	}
	for _, p := range params(protocol.MethodWorkspaceSymbols) {
		if p["query"] != "Widget" {
			t.Errorf("workspace_symbols query %v", p["query"])
		}
	}
	for _, p := range params(protocol.MethodDirtyBuffers) {
		if p["sessionId"] != sid {
			t.Errorf("dirty_buffers params %v without the sessionId", p)
		}
	}
}

// The model is told which files could not be saved before a program ran.
func TestSaveFailureReachesModel(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_e", Name: "edit_file", Arguments: json.RawMessage(`{"path":"g.txt","edits":[{"old_text":"helo","new_text":"hello"}]}`)}}},
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_p", Name: "run_program", Arguments: json.RawMessage(`{"command":["cat","g.txt"]}`)}}},
		{Text: "done"},
	}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	g := e.writeFile("g.txt", "helo\n")
	e.ed.FailSave(g, "read-only file system")
	sid := e.newSession()
	e.setMode(sid, "auto")
	e.prompt(sid, "fix and show")
	var result string
	for _, c := range mainRequests(t, fm) {
		for _, m := range c.Messages {
			if m.Role == "tool" && m.ToolCallID == "call_p" {
				result = string(m.Content)
			}
		}
	}
	if !strings.Contains(result, "g.txt") {
		t.Errorf("the program's tool result does not name the file that could not be saved: %s", result)
	}
}

// Plan mode refuses changes; the user may switch modes from the prompt, which agentd announces
// with current_mode_update and config_option_update.
func TestPlanModeSwitch(t *testing.T) {
	t.Parallel()
	opts := fakeeditor.Full()
	e := start(t, opts, replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "a", "name": "create_file", "args": map[string]any{"path": "a.txt", "content": "a"}}}},
		map[string]any{"text": "ok"},
	)))
	e.ed.AnswerPermissions("switch_mode_auto")
	sid := e.newSession()
	e.setMode(sid, "plan")
	if res := e.prompt(sid, "create"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	us := e.rawUpdates(sid)
	cm := kinds(us, "current_mode_update")
	if len(cm) == 0 || cm[len(cm)-1]["currentModeId"] != "auto" {
		t.Errorf("current_mode_update = %v, want currentModeId auto", cm)
	}
	co := kinds(us, "config_option_update")
	if len(co) == 0 {
		t.Fatal("no config_option_update after the mode changed")
	}
	var opts2 []protocol.ConfigOption
	json.Unmarshal(mustMarshal(co[len(co)-1]["configOptions"]), &opts2)
	checkConfigOptions(t, "config_option_update", opts2, "auto")
	if f := finalUpdate(e, sid, "a"); f == nil || f["status"] != "completed" {
		t.Errorf("the call after switching to auto: %v", f)
	}
}

// The session gets a title (session_info_update), which list reports with updatedAt.
func TestSessionTitle(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, map[string]any{"title": "Fix the widget", "responses": []any{map[string]any{"text": "ok"}}}))
	sid := e.newSession()
	e.prompt(sid, "please fix the widget")
	u := e.ed.WaitUpdate("a session_info_update with a title", func(n protocol.SessionNotification) bool {
		return n.SessionID == sid && n.Update.SessionUpdate == "session_info_update" && n.Update.SessionTitle != ""
	})
	if u.Update.SessionTitle != "Fix the widget" {
		t.Errorf("title %q", u.Update.SessionTitle)
	}
	var l protocol.SessionListResult
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionList, protocol.SessionListParams{Cwd: e.root}, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Sessions) != 1 || l.Sessions[0].Title != "Fix the widget" {
		t.Fatalf("list = %+v", l)
	}
	if _, err := time.Parse(time.RFC3339, l.Sessions[0].UpdatedAt); err != nil {
		t.Errorf("updatedAt %q is not RFC 3339: %v", l.Sessions[0].UpdatedAt, err)
	}
}

// End of input mid-turn flushes the session store: a new process loads the session with the
// prompt that was running.
func TestEndOfInputFlushesStore(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	e := startIn(t, fakeeditor.Full(), slowScript(t), "", root)
	sid := e.newSession()
	go e.ed.Prompt(ctxT(t), sid, "the interrupted prompt")
	e.ed.WaitUpdateKind(sid, "agent_message_chunk")
	e.p.stdin.Close()
	if code, _ := e.p.waitExit(exitGuard); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	e2 := startIn(t, fakeeditor.Full(), slowScript(t), e.p.state, root)
	var lr protocol.SessionLoadResult
	if err := e2.ed.Call(ctxT(t), protocol.MethodSessionLoad, protocol.SessionLoadParams{SessionID: sid, Cwd: root}, &lr); err != nil {
		t.Fatalf("load after end of input: %v", err)
	}
	var user string
	for _, u := range kinds(e2.rawUpdates(sid), "user_message_chunk") {
		s, _ := obj(u, "content", "text").(string)
		user += s
	}
	if !strings.Contains(user, "the interrupted prompt") {
		t.Errorf("the loaded session lacks the interrupted prompt (replayed user text %q)", user)
	}
}

// set_config_option model takes one of the listed values and answers the full set.
func TestSetModel(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	res, err := e.ed.NewSession(ctxT(t), e.root)
	if err != nil {
		t.Fatal(err)
	}
	var model protocol.ConfigOption
	for _, o := range res.ConfigOptions {
		if o.ID == "model" {
			model = o
		}
	}
	if len(model.Options) == 0 {
		t.Fatalf("model option lists no values: %+v", model)
	}
	v := model.Options[len(model.Options)-1].Value
	var sr protocol.SetConfigOptionResult
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionSetConfigOption, protocol.SetConfigOptionParams{SessionID: res.SessionID, ConfigID: "model", Value: v}, &sr); err != nil {
		t.Fatalf("set model to its listed value %q: %v", v, err)
	}
	checkConfigOptions(t, "set model", sr.ConfigOptions, "ask")
	for _, o := range sr.ConfigOptions {
		if o.ID == "model" && o.CurrentValue != v {
			t.Errorf("model currentValue %q, want %q", o.CurrentValue, v)
		}
	}
}
