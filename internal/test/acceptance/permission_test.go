package acceptance_test

// PROTOCOL.md "agentd → client requests": agent/session/request_permission and the options.

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// rawSent returns the params of every request or notification of method agentd sent, as
// decoded JSON.
func (e *env) rawSent(method string) []map[string]any {
	var out []map[string]any
	for _, f := range e.sent() {
		if f.Method == method {
			var m map[string]any
			json.Unmarshal(f.Params, &m)
			out = append(out, m)
		}
	}
	return out
}

// rawPermissions returns the params of every request_permission agentd sent.
func (e *env) rawPermissions() []map[string]any { return e.rawSent(protocol.MethodRequestPermission) }

// checkOptions holds a permission request to exactly the five options and kinds of the contract.
func checkOptions(t *testing.T, p map[string]any) {
	t.Helper()
	want := [][2]string{
		{"allow_once", "allow_once"}, {"allow_session", "allow_always"}, {"allow_always", "allow_always"},
		{"reject_once", "reject_once"}, {"reject_always", "reject_always"},
	}
	// A sandboxed program also offers to allow every sandboxed program for the session (v1.2).
	if box, _ := obj(p, "toolCall", "_meta", "agentd/sandbox").(map[string]any); box["applied"] == true {
		want = append(want, [2]string{"allow_sandboxed_session", "allow_always"})
	}
	opts, _ := p["options"].([]any)
	var got [][2]string
	for _, o := range opts {
		id, _ := obj(o, "optionId").(string)
		kind, _ := obj(o, "kind").(string)
		if name, _ := obj(o, "name").(string); name == "" {
			t.Errorf("option %s has no name", id)
		}
		got = append(got, [2]string{id, kind})
	}
	slices.SortFunc(got, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	slices.SortFunc(want, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	if !slices.Equal(got, want) {
		t.Errorf("permission options (id, kind) = %v, want exactly %v", got, want)
	}
}

// A file change asks with its diff; the five options; allow_once lets it happen.
func TestPermissionForEditCarriesDiff(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "x", "name": "edit_file", "args": map[string]any{"path": "f.txt",
			"edits": []any{map[string]any{"old_text": "old", "new_text": "new"}}}}}},
		map[string]any{"text": "done"},
	)))
	path := e.writeFile("f.txt", "old line\n")
	e.ed.AnswerPermissions("allow_once")
	sid := e.newSession()
	if res := e.prompt(sid, "edit"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	ps := e.rawPermissions()
	if len(ps) != 1 {
		t.Fatalf("%d permission requests, want 1", len(ps))
	}
	p := ps[0]
	if p["sessionId"] != sid {
		t.Errorf("sessionId = %v", p["sessionId"])
	}
	tc, _ := p["toolCall"].(map[string]any)
	if tc == nil || tc["toolCallId"] == nil {
		t.Fatalf("toolCall = %v, want a tool call with its id", p["toolCall"])
	}
	if _, ok := tc["sessionUpdate"]; ok {
		t.Errorf("toolCall carries sessionUpdate, a key ACP's ToolCallUpdate lacks")
	}
	d := findDiff(tc)
	if d == nil || d["path"] != path || d["oldText"] != "old line\n" || d["newText"] != "new line\n" {
		t.Errorf("toolCall diff = %v, want the whole file before and after", d)
	}
	checkOptions(t, p)
	// While the user is asked the call is pending (ACP: awaiting approval); in_progress, running,
	// comes once it is allowed.
	permAt, runAt := -1, -1
	for i, f := range e.sent() {
		if f.Method == protocol.MethodRequestPermission && permAt < 0 {
			permAt = i
		}
		if f.Method == protocol.MethodSessionUpdate && strings.Contains(string(f.Params), `"in_progress"`) && runAt < 0 {
			runAt = i
		}
	}
	if runAt < 0 || runAt < permAt {
		t.Errorf("the call went in_progress (frame %d) before its permission was asked (frame %d)", runAt, permAt)
	}
	if got := e.ed.Text(path); got != "new line\n" {
		t.Errorf("buffer after allow_once = %q", got)
	}
}

// A program asks with its command line and cwd.
func TestPermissionForProgramCarriesCommandAndCwd(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "p", "name": "run_program", "args": map[string]any{"command": []string{"echo", "hi there"}}}}},
		map[string]any{"text": "done"},
	)))
	e.ed.AnswerPermissions("allow_once")
	sid := e.newSession()
	e.prompt(sid, "run")
	ps := e.rawPermissions()
	if len(ps) != 1 {
		t.Fatalf("%d permission requests, want 1", len(ps))
	}
	checkOptions(t, ps[0])
	tc := string(mustMarshal(ps[0]["toolCall"]))
	if !strings.Contains(tc, "echo") || !strings.Contains(tc, "hi there") {
		t.Errorf("toolCall %s lacks the command line", tc)
	}
	if !strings.Contains(tc, mustString(mustMarshal(e.root))) {
		t.Errorf("toolCall %s lacks the cwd %s", tc, e.root)
	}
	if got := callText(e, sid, "p"); !strings.Contains(got, "hi there") {
		t.Errorf("program output %q", got)
	}
}

func mustString(b []byte) string { return strings.Trim(string(b), `"`) }

// callText is the text content of a call's final update (ids are suffixed by the replay).
func callText(e *env, sid, id string) string {
	var out string
	for _, u := range kinds(e.rawUpdates(sid), "tool_call_update") {
		cid, _ := u["toolCallId"].(string)
		if cid != id && !strings.HasPrefix(cid, id+"_") {
			continue
		}
		if u["status"] != "completed" && u["status"] != "failed" {
			continue
		}
		list, _ := u["content"].([]any)
		for _, c := range list {
			if s, ok := obj(c, "content", "text").(string); ok {
				out += s
			}
		}
	}
	return out
}

// finalUpdate is a call's last update with a final status.
func finalUpdate(e *env, sid, id string) map[string]any {
	var out map[string]any
	for _, u := range kinds(e.rawUpdates(sid), "tool_call_update") {
		cid, _ := u["toolCallId"].(string)
		if (cid == id || strings.HasPrefix(cid, id+"_")) && (u["status"] == "completed" || u["status"] == "failed") {
			out = u
		}
	}
	return out
}

// A denial reaches the model as a tool result, the call ends failed with rawOutput saying it was
// denied, and the turn goes on.
func TestPermissionDenied(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_w", Name: "create_file", Arguments: json.RawMessage(`{"path":"x.txt","content":"x"}`)}}},
		{Text: "Understood, I will not create it."},
	}, Routes: []fakemodel.Route{{Match: `"tools":null`, Turn: fakemodel.Turn{Text: "Title"}}}})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	e.ed.AnswerPermissions("reject_once")
	sid := e.newSession()
	if res := e.prompt(sid, "create x"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q, want end_turn (the turn goes on after a denial)", res.StopReason)
	}
	f := finalUpdate(e, sid, "call_w")
	if f == nil || f["status"] != "failed" {
		t.Fatalf("the denied call's final update = %v, want failed", f)
	}
	for _, u := range kinds(e.rawUpdates(sid), "tool_call_update") {
		if u["toolCallId"] == "call_w" && u["status"] == "in_progress" {
			t.Error("the denied call was marked in_progress (running), though it never ran")
		}
	}
	if ro := strings.ToLower(string(mustMarshal(f["rawOutput"]))); f["rawOutput"] == nil || !(strings.Contains(ro, "denied") || strings.Contains(ro, "reject")) {
		t.Errorf("rawOutput = %v, want it to say the call was denied", f["rawOutput"])
	}
	if _, ok := e.ed.Lookup(e.root + "/x.txt"); ok {
		t.Error("the denied file exists")
	}
	// The model's second request carries the tool result of the denial.
	var second string
	for _, body := range fm.Requests() {
		if strings.Contains(string(body), `"tool_call_id":"call_w"`) {
			second = string(body)
		}
	}
	if second == "" || !(strings.Contains(strings.ToLower(second), "reject") || strings.Contains(strings.ToLower(second), "denied")) {
		t.Errorf("no model request carries the denial as a tool result:\n%s", second)
	}
}

// allow_session is remembered: the session's later calls of the same kind do not ask again.
func TestPermissionAllowSessionRemembered(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "a", "name": "create_file", "args": map[string]any{"path": "a.txt", "content": "a"}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "b", "name": "create_file", "args": map[string]any{"path": "a.txt", "content": "b", "overwrite": true}}}},
		map[string]any{"text": "first turn done"},
		map[string]any{"toolCalls": []any{map[string]any{"id": "c", "name": "create_file", "args": map[string]any{"path": "a.txt", "content": "c", "overwrite": true}}}},
		map[string]any{"text": "second turn done"},
	)))
	e.ed.AnswerPermissions("allow_session")
	sid := e.newSession()
	e.prompt(sid, "one")
	e.prompt(sid, "two")
	if n := len(e.ed.PermissionRequests()); n != 1 {
		t.Errorf("%d permission requests, want 1 (allow_session remembered)", n)
	}
	for _, id := range []string{"a", "b", "c"} {
		if f := finalUpdate(e, sid, id); f == nil || f["status"] != "completed" {
			t.Errorf("call %s: %v, want completed", id, f)
		}
	}
	if got := e.ed.Text(e.root + "/a.txt"); got != "c" {
		t.Errorf("a.txt = %q, want c", got)
	}
}

// A client without permissions.ui gets the mode's default, never an endless wait (the fake
// editor fails the test if a request_permission arrives that it did not advertise).
func TestNoPermissionUINeverWaits(t *testing.T) {
	t.Parallel()
	opts := fakeeditor.Full()
	opts.Agent.Permissions.UI = false
	e := start(t, opts, replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "a", "name": "create_file", "args": map[string]any{"path": "a.txt", "content": "a"}}}},
		map[string]any{"text": "ok"},
	)))
	sid := e.newSession()
	if res := e.prompt(sid, "create"); res.StopReason != "end_turn" {
		t.Errorf("stopReason %q", res.StopReason)
	}
	if len(e.rawPermissions()) != 0 {
		t.Errorf("agentd asked a client without permissions.ui")
	}
	// In ask mode the default is to refuse, saying so.
	if f := finalUpdate(e, sid, "a"); f == nil || f["status"] != "failed" {
		t.Errorf("the call in ask mode without a permission UI: %v, want failed", f)
	}
}
