package acceptance_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// "Local models and the web": the text tool-call protocol, the tools-refusal fallback and the
// image refusal, through the binary against the fake OpenAI-compatible model.

// titleRoute (more_test.go) keeps the session-title request off the scripted turns: it matches
// the title's system prompt, since a text-protocol request carries "tools":null like it.

type chatBody struct {
	Tools    []any `json:"tools"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
}

// chatBodies decodes the fake model's requests, leaving out the title requests.
func chatBodies(t *testing.T, fm *fakemodel.Server) []chatBody {
	t.Helper()
	var out []chatBody
	for _, raw := range fm.Requests() {
		if strings.Contains(string(raw), titleRoute[0].Match) {
			continue
		}
		var b chatBody
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func agentText(e *env, sid string) string {
	var b strings.Builder
	for _, u := range kinds(e.rawUpdates(sid), "agent_message_chunk") {
		if c, ok := u["content"].(map[string]any); ok {
			b.WriteString(c["text"].(string))
		}
	}
	return b.String()
}

// A turn under toolCalling "text": no tools field, the catalog and syntax in the system prompt
// (the same bytes in every request), the prose shown without the envelope (split across chunks),
// the call run as a tool call, its result sent back as a <tool_response> user turn, and the answer
// through respond.
func TestTextProtocolTurn(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{Text: "Reading it.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"f.txt\"}}</tool_call>", ChunkSize: 3},
		{Text: `<tool_call>{"name": "respond", "arguments": {"text": "It says hello."}}</tool_call>`},
	}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, map[string]any{
		"providers": map[string]any{"fm": map[string]any{"apiType": "openai", "baseUrl": url, "model": fakemodel.ModelID, "toolCalling": "text"}},
	}))
	e.writeFile("f.txt", "hello\n")
	sid := e.newSession()
	if res := e.prompt(sid, "what does f.txt say?"); res.StopReason != "end_turn" || res.Meta != nil {
		t.Fatalf("result %+v", res)
	}
	if got := agentText(e, sid); got != "Reading it.\nIt says hello." {
		t.Errorf("agent text = %q", got)
	}
	calls := kinds(e.rawUpdates(sid), "tool_call")
	if len(calls) != 1 || calls[0]["kind"] != "read" {
		t.Fatalf("tool calls: %v", calls)
	}
	if f := finalUpdate(e, sid, calls[0]["toolCallId"].(string)); f == nil || f["status"] != "completed" {
		t.Errorf("the read's final update: %v", f)
	}
	bodies := chatBodies(t, fm)
	if len(bodies) != 2 {
		t.Fatalf("%d chat requests, want 2", len(bodies))
	}
	var systems []string
	for i, b := range bodies {
		if b.Tools != nil {
			t.Errorf("request %d declares tools", i)
		}
		sys, _ := b.Messages[0].Content.(string)
		if b.Messages[0].Role != "system" || !strings.Contains(sys, "<tool_call>") || !strings.Contains(sys, "## respond") || !strings.Contains(sys, "## read_file") {
			t.Errorf("request %d system prompt lacks the catalog: %.300s", i, sys)
		}
		systems = append(systems, sys)
	}
	if systems[0] != systems[1] {
		t.Error("the system prompt changed between the turn's requests")
	}
	raw, _ := json.Marshal(bodies[1].Messages)
	if !strings.Contains(string(raw), `\u003ctool_response name=\"read_file\"\u003e\n1\thello`) && !strings.Contains(string(raw), `<tool_response name=\"read_file\">`) {
		t.Errorf("the result did not go back as a tool_response turn: %s", raw)
	}
	if strings.Contains(string(raw), `"role":"tool"`) {
		t.Errorf("a tool role message reached a text-protocol request: %s", raw)
	}
}

// A server that answers 400 to the tools field (Ollama's "does not support tools") is not a
// failed turn: the same turn goes on under the text protocol with one notice, and it is
// remembered, so the next turn (and the next daemon on the same state) sends no tools.
func TestToolsRefusalFallsBackToText(t *testing.T) {
	t.Parallel()
	refusal := fakemodel.Route{Match: `"tools":[`, Turn: fakemodel.Turn{Status: 400,
		ErrorBody: json.RawMessage(`{"error":{"message":"registry.ollama.ai/library/fake-model does not support tools","type":"api_error","param":null,"code":null}}`)}}
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{Text: `<tool_call>{"name": "respond", "arguments": {"text": "Hello from text mode."}}</tool_call>`},
		{Text: `<tool_call>{"name": "respond", "arguments": {"text": "Still text."}}</tool_call>`},
		{Text: `<tool_call>{"name": "respond", "arguments": {"text": "After a restart."}}</tool_call>`},
	}, Routes: append(slices.Clone(titleRoute), refusal)})
	state := t.TempDir()
	e := startIn(t, fakeeditor.Full(), openaiSettings(url, nil), state, realDir(t))
	sid := e.newSession()
	if res := e.prompt(sid, "hi"); res.StopReason != "end_turn" || res.Meta != nil {
		t.Fatalf("result %+v", res)
	}
	if got := agentText(e, sid); got != "Hello from text mode." {
		t.Fatalf("agent text = %q", got)
	}
	var notes []string
	for _, n := range kinds(e.rawUpdates(sid), "notice") {
		notes = append(notes, n["title"].(string))
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "text tool-call protocol") {
		t.Errorf("notices %q", notes)
	}
	e.prompt(sid, "again")
	withTools := func() int {
		n := 0
		for _, b := range chatBodies(t, fm) {
			if b.Tools != nil {
				n++
			}
		}
		return n
	}
	if n := withTools(); n != 1 {
		t.Fatalf("%d requests declared tools, want only the refused first one", n)
	}
	if b, err := os.ReadFile(filepath.Join(state, "agentd", "toolcalling.json")); err != nil || !strings.Contains(string(b), fakemodel.ModelID) {
		t.Fatalf("toolcalling.json: %s %v", b, err)
	}
	e2 := startIn(t, fakeeditor.Full(), openaiSettings(url, nil), state, realDir(t))
	sid2 := e2.newSession()
	e2.prompt(sid2, "after restart")
	if got := agentText(e2, sid2); got != "After a restart." {
		t.Fatalf("after a restart: %q", got)
	}
	if n := withTools(); n != 1 {
		t.Fatalf("after a restart the tools were declared again (%d requests with tools)", n)
	}
}

// An image to a model without vision fails the prompt with -32602 before any request; the
// initialize answer and the session's model option say images are not taken.
func TestImageRefusedForModelWithoutVision(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "never"}}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, map[string]any{
		"providers": map[string]any{"fm": map[string]any{"apiType": "openai", "baseUrl": url, "model": "qwen2.5-coder:7b"}},
	}))
	var init map[string]any
	json.Unmarshal(e.init, &init)
	if img := obj(init, "capabilities", "experimental", "agent", "agentCapabilities", "promptCapabilities", "image"); img != false {
		t.Errorf("initialize promptCapabilities.image = %v, want false for qwen2.5-coder", img)
	}
	res, err := e.ed.NewSession(ctxT(t), e.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.ConfigOptions {
		if o.ID == "model" {
			pc, _ := o.Meta[protocol.MetaPromptCapabilities].(map[string]any)
			if pc["image"] != false {
				t.Errorf("model option _meta = %v", o.Meta)
			}
		}
	}
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	code, msg := e.callError(protocol.MethodSessionPrompt, protocol.PromptParams{SessionID: res.SessionID, Prompt: []protocol.ContentBlock{
		protocol.TextBlock("what is this?"), {Type: "image", MimeType: "image/png", Data: png}}})
	if code != -32602 || !strings.Contains(msg, "cannot read images") || !strings.Contains(msg, "qwen2.5-coder:7b") {
		t.Fatalf("error %d %q", code, msg)
	}
	if n := len(chatBodies(t, fm)); n != 0 {
		t.Fatalf("%d requests reached the model", n)
	}
}

// A text-protocol turn against a server that constrains its output (providers.<id>.outputSchema,
// here llama-server's json_schema): every request carries the envelope schema of the turn's
// tools with respond among them, so the model can still answer in text; the reply is one JSON
// call, without tags, which runs, and respond's text is the answer. A provider that is not known
// to constrain its output is sent no schema.
func TestTextProtocolConstrainedOutput(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{Text: `{"name": "read_file", "arguments": {"path": "f.txt"}}`, ChunkSize: 4},
		{Text: ` {"name": "respond", "arguments": {"text": "It says hello."}}`, ChunkSize: 5},
		{Text: `<tool_call>{"name": "respond", "arguments": {"text": "Unconstrained."}}</tool_call>`},
	}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, map[string]any{
		"providers": map[string]any{
			"fm":    map[string]any{"apiType": "openai", "baseUrl": url, "model": fakemodel.ModelID, "toolCalling": "text", "outputSchema": "json_schema"},
			"plain": map[string]any{"apiType": "openai", "baseUrl": url, "model": fakemodel.ModelID, "toolCalling": "text"},
		},
	}))
	e.writeFile("f.txt", "hello\n")
	sid := e.newSession()
	if res := e.prompt(sid, "what does f.txt say?"); res.StopReason != "end_turn" || res.Meta != nil {
		t.Fatalf("result %+v", res)
	}
	if got := agentText(e, sid); got != "It says hello." {
		t.Errorf("agent text = %q (the JSON envelope must not be shown)", got)
	}
	calls := kinds(e.rawUpdates(sid), "tool_call")
	if len(calls) != 1 || calls[0]["kind"] != "read" {
		t.Fatalf("tool calls: %v", calls)
	}
	var schemas []string
	for _, raw := range fm.Requests() {
		if strings.Contains(string(raw), titleRoute[0].Match) {
			continue
		}
		var b struct {
			JSONSchema     json.RawMessage `json:"json_schema"`
			ResponseFormat json.RawMessage `json:"response_format"`
		}
		json.Unmarshal(raw, &b)
		if b.ResponseFormat != nil {
			t.Errorf("llama-server's json_schema and response_format sent together (it refuses both)")
		}
		schemas = append(schemas, string(b.JSONSchema))
	}
	if len(schemas) != 2 {
		t.Fatalf("%d chat requests, want 2", len(schemas))
	}
	for i, s := range schemas {
		if !strings.Contains(s, `"name":{"const":"respond"}`) || !strings.Contains(s, `"name":{"const":"read_file"}`) || !strings.Contains(s, `"anyOf"`) {
			t.Errorf("request %d's schema does not allow respond and read_file: %.400s", i, s)
		}
	}
	// The same protocol with a server agentd does not know to constrain: no schema sent.
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionSetConfigOption, map[string]any{"sessionId": sid, "configId": "model", "value": "plain"}, nil); err != nil {
		t.Fatalf("switching the session's provider: %v", err)
	}
	n := len(fm.Requests())
	e.prompt(sid, "again")
	if len(fm.Requests()) == n {
		t.Fatal("the second prompt made no request")
	}
	for _, raw := range fm.Requests()[n:] {
		if strings.Contains(string(raw), `"json_schema"`) || strings.Contains(string(raw), `"response_format"`) {
			t.Errorf("a server not known to constrain its output was sent a schema: %.300s", raw)
		}
	}
}
