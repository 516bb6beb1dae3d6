package acceptance_test

// PROTOCOL.md "agent/session/prompt", "agentd → client notification: agent/session/update".

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// A turn streams thoughts and text as chunks, a tool call pending → in_progress → completed,
// a usage_update after every model call, and answers {stopReason, usage}.
func TestPromptTurnUpdates(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"thinking": "Let me look at the file first.", "text": "Reading a.txt.",
			"toolCalls": []any{map[string]any{"id": "r", "name": "read_file", "args": map[string]any{"path": "a.txt"}}}},
		// Deltas 20 ms apart: chunks that arrive while the one before still waits for the writer
		// may be joined, but never across more than 16 ms (jsonrpc), so these stay apart.
		map[string]any{"text": "It says hello, as expected.", "chunkDelayMs": 20},
	)))
	e.writeFile("a.txt", "hello\n")
	sid := e.newSession()
	res := e.prompt(sid, "what is in a.txt?")
	if res.StopReason != "end_turn" {
		t.Errorf("stopReason = %q, want end_turn", res.StopReason)
	}
	if res.Usage == nil || res.Usage.InputTokens <= 0 || res.Usage.OutputTokens <= 0 || res.Usage.TotalTokens < res.Usage.InputTokens+res.Usage.OutputTokens {
		t.Errorf("prompt result usage = %+v, want input, output and total tokens", res.Usage)
	}
	us := e.rawUpdates(sid)

	chunks := func(kind string) string {
		var b strings.Builder
		for _, u := range kinds(us, kind) {
			if u["messageId"] == nil || u["messageId"] == "" {
				t.Errorf("%s without messageId: %v", kind, u)
			}
			if obj(u, "content", "type") != "text" {
				t.Errorf("%s content is not a text block: %v", kind, u["content"])
			}
			s, _ := obj(u, "content", "text").(string)
			b.WriteString(s)
		}
		return b.String()
	}
	if got := chunks("agent_thought_chunk"); got != "Let me look at the file first." {
		t.Errorf("thought chunks = %q", got)
	}
	if got := chunks("agent_message_chunk"); got != "Reading a.txt.It says hello, as expected." {
		t.Errorf("message chunks = %q", got)
	}
	if n := len(kinds(us, "agent_message_chunk")); n < 3 {
		t.Errorf("%d message chunks: the text should stream in deltas", n)
	}

	// The tool call's life.
	var statuses []string
	var first, last map[string]any
	for _, u := range us {
		k := u["sessionUpdate"]
		if k != "tool_call" && k != "tool_call_update" {
			continue
		}
		if first == nil {
			first = u
		}
		if st, ok := u["status"].(string); ok {
			statuses = append(statuses, st)
		}
		last = u
	}
	if first == nil || first["sessionUpdate"] != "tool_call" || first["status"] != "pending" || first["kind"] != "read" || first["title"] == "" {
		t.Fatalf("the first tool update = %v, want a tool_call pending kind read with a title", first)
	}
	id := first["toolCallId"]
	if id == nil || id == "" {
		t.Fatal("tool_call without toolCallId")
	}
	for _, u := range kinds(us, "tool_call_update") {
		if u["toolCallId"] != id {
			t.Errorf("tool_call_update for %v, want %v", u["toolCallId"], id)
		}
	}
	statuses = slices.Compact(statuses)
	if !slices.Equal(statuses, []string{"pending", "in_progress", "completed"}) {
		t.Errorf("statuses %v, want pending → in_progress → completed", statuses)
	}
	if !strings.Contains(string(mustMarshal(last)), "hello") {
		t.Errorf("the completed read carries no output: %v", last)
	}
	if !slices.ContainsFunc(us, func(u map[string]any) bool { return u["toolCallId"] == id && obj(u, "rawInput", "path") == "a.txt" }) {
		t.Errorf("no update of the call carries rawInput {path: a.txt}")
	}

	// usage_update after every model call (two here), each {used, size}.
	uu := kinds(us, "usage_update")
	if len(uu) < 2 {
		t.Errorf("%d usage_update(s) for two model calls", len(uu))
	}
	for _, u := range uu {
		used, ok1 := u["used"].(float64)
		size, ok2 := u["size"].(float64)
		if !ok1 || !ok2 || used <= 0 || size <= 0 {
			t.Errorf("usage_update %v, want used and size", u)
		}
	}
	// Each model call's usage_update comes after that call's output and before the next call's.
	idx := func(pred func(map[string]any) bool) int { return slices.IndexFunc(us, pred) }
	firstUsage := idx(func(u map[string]any) bool { return u["sessionUpdate"] == "usage_update" })
	secondText := idx(func(u map[string]any) bool {
		s, _ := obj(u, "content", "text").(string)
		return u["sessionUpdate"] == "agent_message_chunk" && strings.HasPrefix(s, "It")
	})
	if firstUsage < 0 || secondText < 0 || firstUsage > secondText {
		t.Errorf("no usage_update between the first model call and the second (usage at %d, second text at %d)", firstUsage, secondText)
	}
}

// stopReason maps the model's: max_tokens, refusal; the iteration cap ends max_turn_requests.
func TestStopReasons(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		script   map[string]any
		settings map[string]any
		want     string
	}{
		{"end_turn", responses(map[string]any{"text": "done"}), nil, "end_turn"},
		// A cut response is continued once (the truncation notice); cut again, the turn ends so.
		{"max_tokens", responses(map[string]any{"text": "cut o", "stopReason": "max_tokens"}, map[string]any{"text": "ff again", "stopReason": "max_tokens"}), nil, "max_tokens"},
		{"refusal", responses(map[string]any{"text": "I can't.", "stopReason": "refusal"}), nil, "refusal"},
		{"max_turn_requests", responses(
			map[string]any{"toolCalls": []any{map[string]any{"name": "list_dir", "args": map[string]any{"path": "."}}}},
			map[string]any{"toolCalls": []any{map[string]any{"name": "list_dir", "args": map[string]any{"path": "."}}}},
			map[string]any{"toolCalls": []any{map[string]any{"name": "list_dir", "args": map[string]any{"path": "."}}}},
			map[string]any{"text": "never reached"},
		), map[string]any{"maxIterations": 2}, "max_turn_requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			settings := replay(t, tc.script)
			if tc.settings != nil {
				m := mustJSON(t, settings)
				for k, v := range tc.settings {
					m[k] = v
				}
				settings = mustMarshal(m)
			}
			e := start(t, fakeeditor.Full(), settings)
			sid := e.newSession()
			if res := e.prompt(sid, "go"); res.StopReason != tc.want {
				t.Errorf("stopReason = %q, want %q (meta %v)", res.StopReason, tc.want, res.Meta)
			}
		})
	}
}

// A provider error answers the prompt normally with _meta["agentd/error"] = {kind, message}
// and a notice; it is not a JSON-RPC error.
func TestProviderErrorAnswersNormally(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{Status: 401, ErrorBody: []byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)},
	}})
	_ = fm
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	sid := e.newSession()
	var raw map[string]any
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionPrompt, protocol.PromptParams{SessionID: sid, Prompt: []protocol.ContentBlock{protocol.TextBlock("hi")}}, &raw); err != nil {
		t.Fatalf("a provider error must answer a result, not %v", err)
	}
	sr, _ := raw["stopReason"].(string)
	if !slices.Contains([]string{"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}, sr) {
		t.Errorf("stopReason %q is not one of the contract's", sr)
	}
	em, _ := obj(raw, "_meta", "agentd/error").(map[string]any)
	if em == nil {
		t.Fatalf("no _meta[\"agentd/error\"] in %v", raw)
	}
	if em["kind"] != "auth" {
		t.Errorf("agentd/error kind = %v, want auth", em["kind"])
	}
	if m, _ := em["message"].(string); m == "" {
		t.Errorf("agentd/error has no message: %v", em)
	}
	notices := kinds(e.rawUpdates(sid), "notice")
	found := false
	for _, n := range notices {
		if n["severity"] == "error" && n["title"] != "" {
			found = true
		}
	}
	if !found {
		t.Errorf("no error notice among %v", notices)
	}
}

// A rate limit with retry-after carries retryAfterMs and a notice saying it retries.
func TestProviderRateLimitNotice(t *testing.T) {
	t.Parallel()
	_, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{Status: 429, Headers: map[string]string{"retry-after": "0"},
			ErrorBody: []byte(`{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)},
		{Text: "after the retry"},
	}})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	sid := e.newSession()
	res := e.prompt(sid, "hi")
	if res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q (meta %v), want end_turn after a retry", res.StopReason, res.Meta)
	}
	var warned bool
	for _, n := range kinds(e.rawUpdates(sid), "notice") {
		if n["severity"] == "warning" || n["severity"] == "info" {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no notice about the retry: %v", kinds(e.rawUpdates(sid), "notice"))
	}
}

// A diff's oldText/newText are the whole file before and after; oldText null for a new file;
// paths in agent/* messages are absolute.
func TestToolCallDiffs(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "n", "name": "create_file", "args": map[string]any{"path": "new.txt", "content": "brand new\n"}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "x", "name": "edit_file", "args": map[string]any{"path": "old.txt",
			"edits": []any{map[string]any{"old_text": "two", "new_text": "TWO"}}}}}},
		map[string]any{"text": "done"},
	)))
	old := e.writeFile("old.txt", "one\ntwo\nthree\n")
	sid := e.newSession()
	e.setMode(sid, "auto")
	if res := e.prompt(sid, "edit"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	finals := map[string]map[string]any{}
	for _, u := range kinds(e.rawUpdates(sid), "tool_call_update") {
		if u["status"] == "completed" || u["status"] == "failed" {
			finals[strings.SplitN(u["toolCallId"].(string), "_", 2)[0]] = u
		}
	}
	n, x := finals["n"], finals["x"]
	if n == nil || x == nil || n["status"] != "completed" || x["status"] != "completed" {
		t.Fatalf("final updates: %v", finals)
	}
	if d := findDiff(n); d == nil || d["path"] != filepath.Join(e.root, "new.txt") || !isNull(d, "oldText") || d["newText"] != "brand new\n" {
		t.Errorf("create_file diff = %v, want {type diff, path absolute, oldText null, newText}", d)
	}
	if d := findDiff(x); d == nil || d["path"] != old || d["oldText"] != "one\ntwo\nthree\n" || d["newText"] != "one\nTWO\nthree\n" {
		t.Errorf("edit_file diff = %v, want the whole file before and after", d)
	}
}

// A rate limit agentd will not wait out answers with _meta["agentd/error"].retryAfterMs.
func TestProviderErrorRetryAfter(t *testing.T) {
	t.Parallel()
	_, url := fakeModel(t, fakemodel.Script{RepeatLast: true, Turns: []fakemodel.Turn{
		{Status: 429, Headers: map[string]string{"retry-after": "120"},
			ErrorBody: []byte(`{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)},
	}})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	sid := e.newSession()
	var raw map[string]any
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionPrompt, protocol.PromptParams{SessionID: sid, Prompt: []protocol.ContentBlock{protocol.TextBlock("hi")}}, &raw); err != nil {
		t.Fatalf("a rate-limited turn must answer a result: %v", err)
	}
	em, _ := obj(raw, "_meta", "agentd/error").(map[string]any)
	if em["kind"] != "rate_limit" || em["retryAfterMs"] != float64(120000) {
		t.Errorf("agentd/error = %v, want kind rate_limit, retryAfterMs 120000", em)
	}
}
