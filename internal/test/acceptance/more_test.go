package acceptance_test

// More promises of PROTOCOL.md: the model-facing tool names, prompt content blocks, cancelling
// programs, shutdown during a turn, remembered project decisions, position encodings, and the
// notifications agentd ignores or takes.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// chatRequest is the part of an OpenAI chat request the tests read.
type chatRequest struct {
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func parseChat(t *testing.T, body []byte) chatRequest {
	t.Helper()
	var c chatRequest
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("chat request: %v", err)
	}
	return c
}

// mainRequests are the chat requests of the agent loop (with tools), not side requests.
func mainRequests(t *testing.T, fm *fakemodel.Server) []chatRequest {
	var out []chatRequest
	for _, b := range fm.Requests() {
		if c := parseChat(t, b); len(c.Tools) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// titleRoute answers side requests without tools (session titles, summaries) without using up
// a scripted turn.
var titleRoute = []fakemodel.Route{{Match: "You name coding conversations", Turn: fakemodel.Turn{Text: "A title"}}}

// The tool names are part of the contract.
func TestModelFacingToolNames(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "hi"}}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	sid := e.newSession()
	e.prompt(sid, "hello")
	reqs := mainRequests(t, fm)
	if len(reqs) == 0 {
		t.Fatal("no chat request with tools")
	}
	var names []string
	for _, tl := range reqs[0].Tools {
		names = append(names, tl.Function.Name)
	}
	for _, want := range []string{"read_file", "list_dir", "search_text", "find_symbol", "get_diagnostics", "project_overview",
		"create_file", "edit_file", "create_dir", "rename_path", "move_path", "delete_path",
		"run_program", "add_dependency", "edit_module_config", "agent"} {
		if !slices.Contains(names, want) {
			t.Errorf("the model is not offered %s (offered %v)", want, names)
		}
	}
}

// ContentBlocks: a resource_link is read through the editor (unsaved buffer included); an
// embedded resource's text reaches the model as given.
func TestPromptContentBlocks(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "seen"}}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	linked := e.writeFile("linked.go", "package disk\n")
	e.ed.Open(linked, "package unsavedbuffer\n")
	sid := e.newSession()
	var res protocol.PromptResult
	err := e.ed.Call(ctxT(t), protocol.MethodSessionPrompt, protocol.PromptParams{SessionID: sid, Prompt: []protocol.ContentBlock{
		protocol.TextBlock("look at these"),
		{Type: "resource_link", URI: editorbridge.FileURI(linked), Name: "linked.go"},
		{Type: "resource", Resource: &protocol.EmbeddedResource{URI: editorbridge.FileURI(filepath.Join(e.root, "sel.go")), Text: "func selectedSnippet() {}"}},
	}}, &res)
	if err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	reads := e.ed.WaitRequest(protocol.MethodReadTextFile, 1)
	var p protocol.ReadTextFileParams
	json.Unmarshal(reads[0].Params, &p)
	if p.Path != linked {
		t.Errorf("read_text_file path %q, want %q (absolute)", p.Path, linked)
	}
	reqs := mainRequests(t, fm)
	if len(reqs) == 0 {
		t.Fatal("no chat request")
	}
	body := string(mustMarshal(reqs[0].Messages))
	if !strings.Contains(body, "unsavedbuffer") {
		t.Error("the resource_link's buffer text did not reach the model")
	}
	if strings.Contains(body, "package disk") {
		t.Error("the resource_link was read from disk, not from the editor's buffer")
	}
	if !strings.Contains(body, "selectedSnippet") {
		t.Error("the embedded resource's text did not reach the model")
	}
}

// Cancel kills a running program (its process group) and answers within the bound.
func TestCancelKillsProgram(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "p", "name": "run_program",
			"args": map[string]any{"command": []string{"sh", "-c", "sleep 30 & echo $! > pid.txt; wait"}}}}},
		map[string]any{"text": "unreachable"},
		map[string]any{"text": "after"},
	)))
	sid := e.newSession()
	e.setMode(sid, "auto")
	type answer struct {
		res protocol.PromptResult
		err error
		at  time.Time
	}
	done := make(chan answer, 1)
	go func() {
		res, err := e.ed.Prompt(ctxT(t), sid, "run")
		done <- answer{res, err, time.Now()}
	}()
	pidFile := filepath.Join(e.root, "pid.txt")
	eventually(t, "the program to start", func() bool {
		b, err := os.ReadFile(pidFile)
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
	e.ed.Notify(ctxT(t), protocol.MethodSessionCancel, protocol.SessionIDParams{SessionID: sid})
	a := <-done
	if a.err != nil || a.res.StopReason != "cancelled" {
		t.Fatalf("prompt: %+v %v, want cancelled", a.res, a.err)
	}
	if f := finalUpdate(e, sid, "p"); f == nil || f["status"] != "failed" {
		t.Errorf("the running program's call: %v, want failed", f)
	}
	// The call is marked failed before the prompt's answer (updates are flushed first).
	failedAt, answerAt := -1, -1
	for i, f := range e.sent() {
		if f.Method == protocol.MethodSessionUpdate && strings.Contains(string(f.Params), `"failed"`) && failedAt < 0 {
			failedAt = i
		}
		if f.Method == "" && strings.Contains(string(f.Result), `"cancelled"`) {
			answerAt = i
		}
	}
	if failedAt < 0 || answerAt < 0 || failedAt > answerAt {
		t.Errorf("the failed update (frame %d) does not precede the cancelled answer (frame %d)", failedAt, answerAt)
	}
	b, _ := os.ReadFile(pidFile)
	pid := strings.TrimSpace(string(b))
	eventually(t, "the program's process group (its sleep) to be gone", func() bool {
		_, err := os.Stat("/proc/" + pid)
		return os.IsNotExist(err) || zombie(pid)
	})
	if res := e.prompt(sid, "again"); res.StopReason != "end_turn" {
		t.Errorf("the next prompt: %q", res.StopReason)
	}
}

// eventually polls cond, which watches something outside the editor (the file system, the
// process table) that no event announces, until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not within 10s", what)
		}
		<-tick.C
	}
}

func zombie(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

// shutdown cancels every running turn: the prompt answers cancelled, then shutdown answers.
func TestShutdownCancelsTurns(t *testing.T) {
	t.Parallel()
	w, sid := startWire(t, slowScript(t))
	id := w.prompt(sid, "talk")
	w.wait("the first chunk", func(m map[string]any) bool { return isUpdate(m, "agent_message_chunk") })
	w.p.send(request(9, "shutdown", nil))
	if got := stopOf(t, w.response(id)); got != "cancelled" {
		t.Errorf("the running prompt at shutdown: %q, want cancelled", got)
	}
	if r := w.response(9); r["error"] != nil {
		t.Errorf("shutdown: %v", r)
	}
	w.p.send(notification("exit", nil))
	if code, _ := w.p.waitExit(exitGuard); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// allow_always is persisted for the project: a later process does not ask again; reject_always
// likewise refuses without asking.
func TestProjectDecisionsPersist(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	first := replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "a", "name": "create_file", "args": map[string]any{"path": "a.txt", "content": "a"}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "r", "name": "run_program", "args": map[string]any{"command": []string{"true"}}}}},
		map[string]any{"text": "first done"},
	))
	second := replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "b", "name": "create_file", "args": map[string]any{"path": "b.txt", "content": "b"}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "s", "name": "run_program", "args": map[string]any{"command": []string{"true"}}}}},
		map[string]any{"text": "second done"},
	))
	e := startIn(t, fakeeditor.Full(), first, "", root)
	e.ed.AnswerPermissions("allow_always", "reject_always")
	sid := e.newSession()
	e.prompt(sid, "one")
	if n := len(e.ed.PermissionRequests()); n != 2 {
		t.Fatalf("%d permission requests in the first process, want 2", n)
	}
	if err := e.ed.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	e.p.waitExit(exitGuard)

	e2 := startIn(t, fakeeditor.Full(), second, e.p.state, root) // fails on any permission request
	sid2 := e2.newSession()
	e2.prompt(sid2, "two")
	if n := len(e2.ed.PermissionRequests()); n != 0 {
		t.Errorf("%d permission requests in the second process, want 0 (decisions persisted)", n)
	}
	if f := finalUpdate(e2, sid2, "b"); f == nil || f["status"] != "completed" {
		t.Errorf("create_file after allow_always: %v, want completed", f)
	}
	if f := finalUpdate(e2, sid2, "s"); f == nil || f["status"] != "failed" {
		t.Errorf("run_program after reject_always: %v, want failed", f)
	}
}

// Positions in workspace/applyEdit use the negotiated encoding: an edit after characters outside
// the BMP lands where it should in both UTF-16 and UTF-8.
func TestEditPositionsInNegotiatedEncoding(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"utf-16", "utf-8"} {
		t.Run(enc, func(t *testing.T) {
			t.Parallel()
			opts := fakeeditor.Full()
			opts.PositionEncodings = []string{enc}
			e := start(t, opts, replay(t, responses(
				map[string]any{"toolCalls": []any{map[string]any{"id": "e", "name": "edit_file", "args": map[string]any{"path": "u.txt",
					"edits": []any{map[string]any{"old_text": "target", "new_text": "done"}}}}}},
				map[string]any{"text": "ok"},
			)))
			path := e.writeFile("u.txt", "héllo 𝄞😀 target end\nnext 😀 line\n")
			e.ed.OpenFile(path)
			sid := e.newSession()
			e.setMode(sid, "auto")
			e.prompt(sid, "edit")
			if got := e.ed.Text(path); got != "héllo 𝄞😀 done end\nnext 😀 line\n" {
				t.Errorf("buffer after the edit in %s = %q", enc, got)
			}
		})
	}
}

// textDocument/did* notifications are ignored; workspace/didChangeConfiguration changes the
// settings (here the default mode of new sessions).
func TestNotificationsIgnoredOrTaken(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(map[string]any{"text": "ok"})))
	ctx := ctxT(t)
	uri := editorbridge.FileURI(filepath.Join(e.root, "x.go"))
	e.ed.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "package x"}})
	e.ed.Notify(ctx, "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2}, "contentChanges": []any{map[string]any{"text": "package y"}}})
	e.ed.Notify(ctx, "textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
	e.ed.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	e.ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agent": map[string]any{"mode": "plan"}}})
	res, err := e.ed.NewSession(ctx, e.root)
	if err != nil {
		t.Fatal(err)
	}
	checkConfigOptions(t, "session/new after didChangeConfiguration", res.ConfigOptions, "plan")
	for _, f := range e.sent() {
		if f.Error != nil {
			t.Errorf("agentd answered a notification with an error: %s", f.Error)
		}
	}
}

// available_commands_update for a new session comes after session/new's answer (the client
// learns the sessionId from it).
func TestAvailableCommandsAfterNewAnswer(t *testing.T) {
	t.Parallel()
	w, sid := startWire(t, replay(t, responses(map[string]any{"text": "ok"})))
	i := w.wait("available_commands_update", func(m map[string]any) bool { return isUpdate(m, "available_commands_update") })
	m, _ := w.frame(i)
	if obj(m, "params", "sessionId") != sid {
		t.Errorf("available_commands_update for %v, want %s", obj(m, "params", "sessionId"), sid)
	}
	answer := w.wait("the session/new answer", func(m map[string]any) bool { v, _ := m["id"].(float64); return v == 2 })
	if i < answer {
		t.Errorf("available_commands_update (frame %d) before the session/new answer (frame %d)", i, answer)
	}
	cmds, _ := obj(m, "params", "update", "availableCommands").([]any)
	for _, c := range cmds {
		if n, _ := obj(c, "name").(string); n == "" {
			t.Errorf("command without a name: %v", c)
		}
		if _, ok := obj(c, "description").(string); !ok {
			t.Errorf("command without a description: %v", c)
		}
	}
}
