package acceptance_test

// PROTOCOL.md "Client → agentd requests": the session methods, their results and their errors.

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/protocol"
)

// checkConfigOptions holds a configOptions list to the contract: mode (category mode with
// ask/auto/plan) and model (category model) are always there.
func checkConfigOptions(t *testing.T, where string, opts []protocol.ConfigOption, wantMode string) {
	t.Helper()
	byID := map[string]protocol.ConfigOption{}
	for _, o := range opts {
		byID[o.ID] = o
	}
	mode, ok := byID["mode"]
	if !ok {
		t.Fatalf("%s: configOptions lack mode: %+v", where, opts)
	}
	if mode.Category != "mode" {
		t.Errorf("%s: mode category = %q, want mode", where, mode.Category)
	}
	var vals []string
	for _, v := range mode.Options {
		vals = append(vals, v.Value)
	}
	for _, v := range []string{"ask", "auto", "plan"} {
		if !slices.Contains(vals, v) {
			t.Errorf("%s: mode options %v lack %s", where, vals, v)
		}
	}
	if wantMode != "" && mode.CurrentValue != wantMode {
		t.Errorf("%s: mode currentValue = %q, want %q", where, mode.CurrentValue, wantMode)
	}
	model, ok := byID["model"]
	if !ok {
		t.Fatalf("%s: configOptions lack model: %+v", where, opts)
	}
	if model.Category != "model" {
		t.Errorf("%s: model category = %q, want model", where, model.Category)
	}
	if model.CurrentValue == "" {
		t.Errorf("%s: model has no currentValue", where)
	}
}

func TestSessionNewResult(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	res, err := e.ed.NewSession(ctxT(t), e.root)
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionID == "" {
		t.Fatal("no sessionId")
	}
	checkConfigOptions(t, "session/new", res.ConfigOptions, "ask")
	// Every configOptions entry is an ACP select.
	for _, o := range res.ConfigOptions {
		if o.Type != "select" || o.Name == "" {
			t.Errorf("config option %s: type %q name %q, want a named select", o.ID, o.Type, o.Name)
		}
	}
	if res.Modes != nil && res.Modes.CurrentModeID != "ask" {
		t.Errorf("modes.currentModeId = %q, want ask", res.Modes.CurrentModeID)
	}
}

func TestSetConfigOptionReturnsFullSet(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	sid := e.newSession()
	var res protocol.SetConfigOptionResult
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionSetConfigOption,
		protocol.SetConfigOptionParams{SessionID: sid, ConfigID: "mode", Value: "plan"}, &res); err != nil {
		t.Fatal(err)
	}
	checkConfigOptions(t, "set_config_option", res.ConfigOptions, "plan")

	// Errors: an unknown option or value is invalid params naming the field; an unknown session
	// is -32002.
	code, msg := e.callError(protocol.MethodSessionSetConfigOption, protocol.SetConfigOptionParams{SessionID: sid, ConfigID: "mode", Value: "yolo"})
	if code != -32602 || !strings.Contains(msg, "value") {
		t.Errorf("bad mode value: %d %q, want -32602 naming value", code, msg)
	}
	code, msg = e.callError(protocol.MethodSessionSetConfigOption, protocol.SetConfigOptionParams{SessionID: sid, ConfigID: "colour", Value: "red"})
	if code != -32602 || !strings.Contains(msg, "configId") {
		t.Errorf("unknown configId: %d %q, want -32602 naming configId", code, msg)
	}
	code, _ = e.callError(protocol.MethodSessionSetConfigOption, protocol.SetConfigOptionParams{SessionID: "nope", ConfigID: "mode", Value: "ask"})
	if code != -32002 {
		t.Errorf("unknown session: %d, want -32002", code)
	}
}

// Every method that names a session answers -32002 for an unknown one.
func TestUnknownSession(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	for method, params := range map[string]any{
		protocol.MethodSessionPrompt: protocol.PromptParams{SessionID: "no-such-session", Prompt: []protocol.ContentBlock{protocol.TextBlock("hi")}},
		protocol.MethodSessionLoad:   protocol.SessionLoadParams{SessionID: "no-such-session", Cwd: e.root},
		protocol.MethodSessionResume: protocol.SessionLoadParams{SessionID: "no-such-session", Cwd: e.root},
		protocol.MethodSessionClose:  protocol.SessionIDParams{SessionID: "no-such-session"},
		protocol.MethodSessionDelete: protocol.SessionIDParams{SessionID: "no-such-session"},
	} {
		if code, msg := e.callError(method, params); code != -32002 {
			t.Errorf("%s on an unknown session: %d %q, want -32002", method, code, msg)
		}
	}
}

// Invalid params: -32602 whose message names the field.
func TestInvalidParamsNameTheField(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	sid := e.newSession()
	for _, tc := range []struct {
		method string
		params any
		field  string
	}{
		{protocol.MethodSessionNew, map[string]any{}, "cwd"},
		{protocol.MethodSessionNew, map[string]any{"cwd": "relative/dir"}, "cwd"},
		{protocol.MethodSessionNew, map[string]any{"cwd": 42}, "cwd"},
		{protocol.MethodSessionPrompt, map[string]any{"sessionId": sid}, "prompt"},
		{protocol.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": "hello"}, "prompt"},
		{protocol.MethodSessionPrompt, map[string]any{"prompt": []any{map[string]any{"type": "text", "text": "x"}}}, "sessionId"},
		{protocol.MethodSessionLoad, map[string]any{"sessionId": sid}, "cwd"},
		{protocol.MethodSessionList, map[string]any{"cwd": "rel"}, "cwd"},
		{protocol.MethodSessionClose, map[string]any{}, "sessionId"},
		{protocol.MethodSessionSetConfigOption, map[string]any{"sessionId": sid, "value": "ask"}, "configId"},
		{protocol.MethodProvidersTest, map[string]any{}, "providerId"},
		{protocol.MethodProvidersSet, map[string]any{"apiType": "openai"}, "providerId"},
		{protocol.MethodProvidersSet, map[string]any{"providerId": "x"}, "apiType"},
	} {
		b, _ := json.Marshal(tc.params)
		code, msg := e.callError(tc.method, tc.params)
		if code != -32602 || !strings.Contains(msg, tc.field) {
			t.Errorf("%s %s: %d %q, want -32602 naming %s", tc.method, b, code, msg, tc.field)
		}
	}
}

// list, close, delete; load replays, resume does not.
func TestSessionListCloseDelete(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"text": "first answer"},
		map[string]any{"text": "second answer"},
	)))
	other := realDir(t)
	a := e.newSession()
	e.prompt(a, "first")
	bRes, err := e.ed.NewSession(ctxT(t), other)
	if err != nil {
		t.Fatal(err)
	}
	b := bRes.SessionID
	var res json.RawMessage
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionPrompt, protocol.PromptParams{SessionID: b, Prompt: []protocol.ContentBlock{protocol.TextBlock("second")}}, &res); err != nil {
		t.Fatal(err)
	}

	list := func(params protocol.SessionListParams) protocol.SessionListResult {
		t.Helper()
		var l protocol.SessionListResult
		if err := e.ed.Call(ctxT(t), protocol.MethodSessionList, params, &l); err != nil {
			t.Fatalf("list: %v", err)
		}
		return l
	}
	ids := func(l protocol.SessionListResult) []string {
		var out []string
		for _, s := range l.Sessions {
			out = append(out, s.SessionID)
		}
		return out
	}
	all := list(protocol.SessionListParams{})
	if !slices.Contains(ids(all), a) || !slices.Contains(ids(all), b) {
		t.Fatalf("list without cwd = %v, want both %s and %s", ids(all), a, b)
	}
	for _, s := range all.Sessions {
		if s.Cwd == "" || !filepath.IsAbs(s.Cwd) {
			t.Errorf("session %s: cwd %q, want an absolute path", s.SessionID, s.Cwd)
		}
	}
	inRoot := list(protocol.SessionListParams{Cwd: e.root})
	if got := ids(inRoot); !slices.Contains(got, a) || slices.Contains(got, b) {
		t.Errorf("list{cwd: root} = %v, want %s and not %s", got, a, b)
	}

	var empty map[string]any
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionClose, protocol.SessionIDParams{SessionID: a}, &empty); err != nil {
		t.Fatalf("close: %v", err)
	}
	if len(empty) != 0 {
		t.Errorf("close answered %v, want {}", empty)
	}
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionDelete, protocol.SessionIDParams{SessionID: b}, &empty); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if len(empty) != 0 {
		t.Errorf("delete answered %v, want {}", empty)
	}
	if got := ids(list(protocol.SessionListParams{})); slices.Contains(got, b) {
		t.Errorf("list after delete still holds %s: %v", b, got)
	}
	if code, _ := e.callError(protocol.MethodSessionLoad, protocol.SessionLoadParams{SessionID: b, Cwd: other}); code != -32002 {
		t.Errorf("load of a deleted session: %d, want -32002", code)
	}
	// A closed session is still stored: it can be resumed and prompted again.
	var rr protocol.SessionLoadResult
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionResume, protocol.SessionLoadParams{SessionID: a, Cwd: e.root}, &rr); err != nil {
		t.Fatalf("resume after close: %v", err)
	}
}

// load replays the whole history (messages, thoughts, tool calls with final status and diffs,
// plans) in a new process, then answers {configOptions}; resume answers without replay.
func TestSessionLoadReplaysAndResumeDoesNot(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	settings := replay(t, responses(
		map[string]any{"thinking": "I should plan first.", "text": "Planning.", "toolCalls": []any{
			map[string]any{"id": "p", "name": "update_plan", "args": map[string]any{"entries": []any{
				map[string]any{"content": "Create the notes", "priority": "high", "status": "in_progress"}}}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "c", "name": "create_file",
			"args": map[string]any{"path": "notes.txt", "content": "remember\n"}}}},
		map[string]any{"text": "Created notes.txt."},
	))
	opts := fakeeditor.Full()
	e := startIn(t, opts, settings, "", root)
	sid := e.newSession()
	e.setMode(sid, "auto")
	if res := e.prompt(sid, "make notes"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	if err := e.ed.Shutdown(ctxT(t)); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	e.p.waitExit(exitGuard)

	// A new process on the same state directory.
	e2 := startIn(t, opts, settings, e.p.state, root)
	var lr protocol.SessionLoadResult
	if err := e2.ed.Call(ctxT(t), protocol.MethodSessionLoad, protocol.SessionLoadParams{SessionID: sid, Cwd: root}, &lr); err != nil {
		t.Fatalf("load: %v", err)
	}
	checkConfigOptions(t, "load", lr.ConfigOptions, "auto")
	// Replay happens before the answer: everything is already here.
	us := e2.rawUpdates(sid)
	text := func(kind string) string {
		var b strings.Builder
		for _, u := range kinds(us, kind) {
			if s, ok := obj(u, "content", "text").(string); ok {
				b.WriteString(s)
			}
		}
		return b.String()
	}
	if got := text("user_message_chunk"); !strings.Contains(got, "make notes") {
		t.Errorf("replayed user text %q lacks the prompt", got)
	}
	if got := text("agent_thought_chunk"); !strings.Contains(got, "I should plan first.") {
		t.Errorf("replayed thoughts %q", got)
	}
	if got := text("agent_message_chunk"); !strings.Contains(got, "Planning.") || !strings.Contains(got, "Created notes.txt.") {
		t.Errorf("replayed agent text %q", got)
	}
	plans := kinds(us, "plan")
	if len(plans) == 0 || !strings.Contains(string(mustMarshal(plans[len(plans)-1])), "Create the notes") {
		t.Errorf("replay holds no plan with the entry: %v", plans)
	}
	// The create_file call: a tool_call, and its final status completed with the diff.
	var final map[string]any
	var sawCall bool
	for _, u := range us {
		id, _ := u["toolCallId"].(string)
		if !strings.HasPrefix(id, "c") {
			continue
		}
		if u["sessionUpdate"] == "tool_call" {
			sawCall = true
		}
		if st, _ := u["status"].(string); st == "completed" || st == "failed" {
			final = u
		}
	}
	if !sawCall || final == nil || final["status"] != "completed" {
		t.Fatalf("replay lacks the create_file call with its final status: %v", us)
	}
	diff := findDiff(final)
	if diff == nil || diff["path"] != filepath.Join(root, "notes.txt") || diff["newText"] != "remember\n" || !isNull(diff, "oldText") {
		t.Errorf("replayed call's diff = %v, want path, oldText null, newText", diff)
	}

	// resume: no replay.
	var rr protocol.SessionLoadResult
	e3 := startIn(t, opts, settings, e.p.state, root)
	if err := e3.ed.Call(ctxT(t), protocol.MethodSessionResume, protocol.SessionLoadParams{SessionID: sid, Cwd: root}, &rr); err != nil {
		t.Fatalf("resume: %v", err)
	}
	checkConfigOptions(t, "resume", rr.ConfigOptions, "auto")
	for _, u := range e3.rawUpdates(sid) {
		switch u["sessionUpdate"] {
		case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan":
			t.Errorf("resume replayed a %v update", u["sessionUpdate"])
		}
	}
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// findDiff returns the first {type:"diff"} content item of an update.
func findDiff(u map[string]any) map[string]any {
	list, _ := u["content"].([]any)
	for _, c := range list {
		if m, ok := c.(map[string]any); ok && m["type"] == "diff" {
			return m
		}
	}
	return nil
}

// isNull reports whether m holds key with the value null (present, not omitted).
func isNull(m map[string]any, key string) bool {
	v, ok := m[key]
	return ok && v == nil
}
