package session

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

// mcpDocsServer is a real MCP server on the official SDK over Streamable HTTP: one tool that
// claims, through its annotations, to be read-only.
func mcpDocsServer(t *testing.T) json.RawMessage {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "lookup", Description: "Looks up docs.", InputSchema: map[string]any{"type": "object"},
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "docs for " + string(r.Params.Arguments)}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "shot", Description: "Takes a screenshot.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the page"}, &sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG shot")}}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "summarize", Description: "Summarize a topic\nfrom the docs", Arguments: []*sdk.PromptArgument{{Name: "topic"}}},
		func(_ context.Context, r *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Summarize " + r.Params.Arguments["topic"] + " from the docs."}}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	entry, _ := json.Marshal(map[string]any{"type": "http", "name": "docs", "url": ts.URL, "headers": []any{}})
	return entry
}

func (h *harness) newSessionWith(servers ...json.RawMessage) {
	h.t.Helper()
	res, err := h.m.New(context.Background(), protocol.SessionNewParams{Cwd: h.dir, MCPServers: servers})
	if err != nil {
		h.t.Fatal(err)
	}
	h.sid = res.SessionID
}

// Every contributed call asks, in auto mode too and whatever its annotations say, with the
// three options only and a title naming the server; reject_always is remembered.
func TestMCPCallAsksInAutoMode(t *testing.T) {
	call := func(id string) reply { return reply{events: callsReply(tc{id, "lookup", `{"q":"x"}`})} }
	h := newHarness(t, call("c1"), reply{events: textReply("ok")}, call("c2"), reply{events: textReply("ok")}, call("c3"), reply{events: textReply("ok")})
	entry := mcpDocsServer(t)
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) }) // before the server's Close
	h.set.Mode = ModeAuto
	h.newSessionWith(entry)
	h.client.answer = answerWith(protocol.OptionAllowOnce)
	h.prompt("look it up")

	perms := h.client.permissions()
	if len(perms) != 1 {
		t.Fatalf("%d permission requests in auto mode, want 1", len(perms))
	}
	p := perms[0]
	if p.ToolCall.Title != "docs: lookup" || p.ToolCall.Kind != protocol.KindOther {
		t.Errorf("request title %q kind %q", p.ToolCall.Title, p.ToolCall.Kind)
	}
	if got := p.ToolCall.Meta[protocol.MetaMCPServer]; got != "docs" {
		t.Errorf("request _meta[%s] = %v, want docs", protocol.MetaMCPServer, got)
	}
	var announced []protocol.SessionUpdate
	for _, u := range h.client.snapshot() {
		if u.SessionUpdate == protocol.UpdateToolCall {
			announced = append(announced, u)
		}
	}
	if len(announced) != 1 || announced[0].Meta[protocol.MetaMCPServer] != "docs" {
		t.Errorf("tool_call announcements = %+v, want one naming the server docs", announced)
	}
	var opts []string
	for _, o := range p.Options {
		opts = append(opts, o.Kind)
	}
	if !slices.Equal(opts, []string{"allow_once", "reject_once", "reject_always"}) {
		t.Errorf("options = %v", opts)
	}
	reqs := h.prov.requests()
	if !slices.ContainsFunc(reqs[0].Tools, func(s providers.ToolSpec) bool { return s.Name == "lookup" }) {
		t.Errorf("the model was not offered lookup: %v", reqs[0].Tools)
	}
	res := toolResults(h.m.sessions[h.sid].historySnapshot())
	if len(res) != 1 || res[0].IsError || res[0].Text != `docs for {"q":"x"}` {
		t.Fatalf("results = %+v", res)
	}

	h.client.answer = answerWith(protocol.OptionRejectAlways)
	h.prompt("again")
	h.prompt("and again")
	if n := len(h.client.permissions()); n != 2 {
		t.Errorf("%d permission requests, want 2 (the third call refused by the remembered rule)", n)
	}
	res = toolResults(h.m.sessions[h.sid].historySnapshot())
	if len(res) != 3 || !res[1].IsError || !res[2].IsError || !strings.Contains(res[2].Text, "reject always") {
		t.Errorf("results = %+v", res)
	}
}

// shotTurn runs a turn whose model calls the docs server's shot tool (a text and a PNG), with the
// model's capabilities set when caps is not nil, and returns the harness and the last message of
// the second request: the results.
func shotTurn(t *testing.T, caps *config.Capabilities) (*harness, providers.Message) {
	t.Helper()
	h := newHarness(t, reply{events: callsReply(tc{"c1", "shot", `{}`})}, reply{events: textReply("ok")})
	if caps != nil {
		h.set.Providers["fake"] = config.ProviderSettings{APIType: "fake", Model: "fake-model", Capabilities: caps}
	}
	entry := mcpDocsServer(t)
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	h.newSessionWith(entry)
	h.client.answer = answerWith(protocol.OptionAllowOnce)
	h.prompt("look at the page")
	reqs := h.prov.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	return h, reqs[1].Messages[len(reqs[1].Messages)-1]
}

// A contributed tool's image reaches the model with its result: an image part tied to the call,
// after the results.
func TestMCPImageResultsReachTheModel(t *testing.T) {
	_, last := shotTurn(t, nil)
	var kinds []string
	for _, p := range last.Parts {
		kinds = append(kinds, string(p.Type)+":"+p.ToolCallID)
	}
	if !slices.Equal(kinds, []string{"tool_result:c1", "image:c1"}) {
		t.Fatalf("the results message = %v, want the result then its image", kinds)
	}
	if r, img := last.Parts[0], last.Parts[1]; !strings.Contains(r.Text, "the page") || !strings.Contains(r.Text, "[image 1 of this result (image/png) follows]") ||
		img.MimeType != "image/png" || string(img.Data) != "\x89PNG shot" {
		t.Errorf("result %q, image %s %q", r.Text, img.MimeType, img.Data)
	}
}

// A model without vision gets a note in place of a tool's image, never the image (its server
// would refuse the whole request); the history keeps the image for a model that can read it.
func TestMCPImageResultsLeftOutForAModelWithoutVision(t *testing.T) {
	no, yes := false, true
	h, last := shotTurn(t, &config.Capabilities{Images: &no, Tools: &yes})
	for _, p := range last.Parts {
		if p.Type == providers.PartImage {
			t.Fatalf("an image reached a model without vision: %+v", last.Parts)
		}
	}
	if p := last.Parts[len(last.Parts)-1]; p.Type != providers.PartText || !strings.Contains(p.Text, "cannot read images") {
		t.Errorf("the image's place holds %+v, want a note that it was left out", p)
	}
	hist := h.m.sessions[h.sid].historySnapshot()
	if p := hist[len(hist)-2].Parts; p[len(p)-1].Type != providers.PartImage {
		t.Errorf("the history lost the image: %+v", p)
	}
}

func TestMCPPlanModeRefuses(t *testing.T) {
	h := newHarness(t, reply{events: callsReply(tc{"c1", "lookup", `{}`})}, reply{events: textReply("ok")})
	entry := mcpDocsServer(t)
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	h.set.Mode = ModePlan
	h.newSessionWith(entry)
	h.client.answer = answerWith(protocol.OptionAllowOnce)
	h.prompt("look")
	if n := len(h.client.permissions()); n != 0 {
		t.Errorf("plan mode asked %d times", n)
	}
	res := toolResults(h.m.sessions[h.sid].historySnapshot())
	if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Text, "Plan mode") {
		t.Errorf("results = %+v", res)
	}
}

// A project file's server starts only once the user approves it, in auto mode too; allow_always
// is remembered for the project, so the next session starts it without asking.
func TestMCPProjectServerNeedsApproval(t *testing.T) {
	h := newHarness(t, reply{events: callsReply(tc{"c1", "lookup", `{}`})}, reply{events: textReply("ok")})
	entry := mcpDocsServer(t)
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	h.set.Mode = ModeAuto
	h.set.ProjectMCPServers = []json.RawMessage{entry}
	h.client.answer = func(_ context.Context, p protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
		opt := protocol.OptionAllowOnce
		if strings.HasPrefix(p.ToolCall.Title, "Start MCP server") {
			opt = protocol.OptionAllowAlways
		}
		return protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "selected", OptionID: opt}}, nil
	}
	hasLookup := func(sid string) func() bool {
		return func() bool {
			_, ok := h.m.sessions[sid].toolset(context.Background()).Lookup("lookup")
			return ok
		}
	}
	h.newSession()
	h.client.waitPermission(t, 1)
	p := h.client.permissions()[0]
	var input map[string]any
	_ = json.Unmarshal(p.ToolCall.RawInput, &input)
	if p.ToolCall.Title != "Start MCP server docs" || p.ToolCall.Kind != protocol.KindExecute || input["url"] == nil {
		t.Errorf("start request = %+v (rawInput %s)", p.ToolCall, p.ToolCall.RawInput)
	}
	var opts []string
	for _, o := range p.Options {
		opts = append(opts, o.OptionID)
	}
	if !slices.Equal(opts, []string{protocol.OptionAllowAlways, protocol.OptionAllowOnce, protocol.OptionRejectOnce, protocol.OptionRejectAlways}) {
		t.Errorf("options = %v", opts)
	}
	pollTrue(t, "the approved server's tool", hasLookup(h.sid))

	// A second session of the project: remembered, no question.
	h.newSession()
	pollTrue(t, "the remembered server's tool", hasLookup(h.sid))
	if n := len(h.client.permissions()); n != 1 {
		t.Errorf("%d permission requests, want the first only", n)
	}
}

// Rejected, the project's server never starts.
func TestMCPProjectServerRejected(t *testing.T) {
	h := newHarness(t)
	entry := mcpDocsServer(t)
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	h.set.ProjectMCPServers = []json.RawMessage{entry}
	h.client.answer = answerWith(protocol.OptionRejectOnce)
	h.newSession()
	h.client.waitPermission(t, 1)
	s := h.m.sessions[h.sid]
	if _, ok := s.toolset(context.Background()).Lookup("lookup"); ok {
		t.Error("a rejected project server's tool is offered")
	}
}

func pollTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A server's prompts are slash commands /SERVER.PROMPT; running one sends the model the text the
// server renders.
func TestMCPPromptsAreCommands(t *testing.T) {
	h := newHarness(t, reply{events: textReply("ok")})
	entry := mcpDocsServer(t)
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	h.newSessionWith(entry)
	h.client.waitFor(t, "the prompt command", func(us []protocol.SessionUpdate) bool {
		for _, u := range kinds(us, protocol.UpdateAvailableCommandsUpdate) {
			for _, c := range u.AvailableCommands {
				if c.Name == "docs.summarize" && c.Input != nil && c.Input.Hint == "topic" && c.Description == "Summarize a topic from the docs" {
					return true
				}
			}
		}
		return false
	})
	h.prompt("/docs.summarize go modules")
	reqs := h.prov.requests()
	msgs := reqs[0].Messages
	last := msgs[len(msgs)-1]
	if len(last.Parts) == 0 || last.Parts[0].Text != "Summarize go modules from the docs." {
		t.Errorf("the model got %+v", last.Parts)
	}
}

// The "Start MCP server" card shows what the server would run with: its env (a PYTHONPATH or
// NODE_OPTIONS runs repository code) and its headers, in the card's text and in rawInput; the
// values of secret headers and variables are redacted, their names shown (issue 26 item 9).
func TestMCPStartCardShowsEnvAndHeaders(t *testing.T) {
	h := newHarness(t)
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	stdio, _ := json.Marshal(map[string]any{"name": "py", "command": "python3", "args": []string{"-m", "srv"},
		"env": []map[string]string{{"name": "PYTHONPATH", "value": "./.hidden"}, {"name": "NODE_OPTIONS", "value": "--require ./x.js"}, {"name": "API_TOKEN", "value": "tok-s3cret"}}})
	web, _ := json.Marshal(map[string]any{"type": "http", "name": "web", "url": "https://mcp.example/mcp",
		"headers": []map[string]string{{"name": "Authorization", "value": "Bearer s3cret"}, {"name": "X-Api-Key", "value": "k3y-s3cret"}, {"name": "X-Trace", "value": "visible-trace"}}})
	h.set.ProjectMCPServers = []json.RawMessage{stdio, web}
	h.client.answer = func(context.Context, protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
		return protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "selected", OptionID: protocol.OptionRejectOnce}}, nil
	}
	h.newSession()
	h.client.waitPermission(t, 2)
	cards := map[string]protocol.RequestPermissionParams{}
	for _, p := range h.client.permissions() {
		cards[p.ToolCall.Title] = p
	}
	text := func(p protocol.RequestPermissionParams) string {
		var b strings.Builder
		for _, c := range p.ToolCall.ToolContent {
			if c.Content != nil {
				b.WriteString(c.Content.Text)
			}
		}
		return b.String()
	}
	py, ok := cards["Start MCP server py"]
	if !ok {
		t.Fatalf("cards = %v", cards)
	}
	var in struct {
		Command []string        `json:"command"`
		Env     []mcp.NameValue `json:"env"`
		Headers []mcp.NameValue `json:"headers"`
		URL     string          `json:"url"`
	}
	_ = json.Unmarshal(py.ToolCall.RawInput, &in)
	if !slices.Contains(in.Env, mcp.NameValue{Name: "PYTHONPATH", Value: "./.hidden"}) || !slices.Contains(in.Env, mcp.NameValue{Name: "NODE_OPTIONS", Value: "--require ./x.js"}) {
		t.Errorf("rawInput env = %+v (%s)", in.Env, py.ToolCall.RawInput)
	}
	for _, want := range []string{"python3 -m srv", "PYTHONPATH=./.hidden", "NODE_OPTIONS=--require ./x.js", "API_TOKEN="} {
		if !strings.Contains(text(py), want) {
			t.Errorf("card text lacks %q:\n%s", want, text(py))
		}
	}
	web2, ok := cards["Start MCP server web"]
	if !ok {
		t.Fatalf("cards = %v", cards)
	}
	in.Env, in.Headers = nil, nil
	_ = json.Unmarshal(web2.ToolCall.RawInput, &in)
	var names []string
	for _, nv := range in.Headers {
		names = append(names, nv.Name)
	}
	if !slices.Equal(names, []string{"Authorization", "X-Api-Key", "X-Trace"}) || in.URL != "https://mcp.example/mcp" {
		t.Errorf("rawInput = %s", web2.ToolCall.RawInput)
	}
	for _, want := range []string{"https://mcp.example/mcp", "Authorization:", "X-Api-Key:", "X-Trace: visible-trace"} {
		if !strings.Contains(text(web2), want) {
			t.Errorf("card text lacks %q:\n%s", want, text(web2))
		}
	}
	for _, p := range []protocol.RequestPermissionParams{py, web2} {
		all := text(p) + string(p.ToolCall.RawInput)
		for _, secret := range []string{"s3cret"} {
			if strings.Contains(all, secret) {
				t.Errorf("a secret value is on the card: %s", all)
			}
		}
	}
}

// Issue 29 item 3 through a turn: with more contributed tools than the budget, the model is
// offered find_tools; a tool it finds is offered from the turn's next step and runs there.
func TestMCPFindToolsInATurn(t *testing.T) {
	h := newHarness(t,
		reply{events: callsReply(tc{"c1", "find_tools", `{"query":"tool_19"}`})},
		reply{events: callsReply(tc{"c2", "tool_19", `{}`})},
		reply{events: textReply("done")})
	srv := sdk.NewServer(&sdk.Implementation{Name: "wide", Version: "1"}, nil)
	for i := range 20 {
		name := fmt.Sprintf("tool_%02d", i)
		srv.AddTool(&sdk.Tool{Name: name, Description: "Tool " + name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ran " + name}}}, nil
			})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	entry, _ := json.Marshal(map[string]any{"type": "http", "name": "wide", "url": ts.URL})
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	h.newSessionWith(entry)
	h.client.answer = answerWith(protocol.OptionAllowOnce)
	h.prompt("use tool 19")
	reqs := h.prov.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests", len(reqs))
	}
	offered := func(r *providers.Request, name string) bool {
		return slices.ContainsFunc(r.Tools, func(s providers.ToolSpec) bool { return s.Name == name })
	}
	if !offered(reqs[0], "find_tools") || offered(reqs[0], "tool_19") {
		t.Errorf("first step's tools: find_tools %v, tool_19 %v", offered(reqs[0], "find_tools"), offered(reqs[0], "tool_19"))
	}
	if !offered(reqs[1], "tool_19") {
		t.Error("the found tool was not offered at the next step")
	}
	// find_tools reads only; the found tool's call asks, as every contributed call does.
	if perms := h.client.permissions(); len(perms) != 1 || perms[0].ToolCall.Title != "wide: tool_19" {
		t.Errorf("permission requests = %+v", perms)
	}
	res := toolResults(h.m.sessions[h.sid].historySnapshot())
	if len(res) != 2 || !strings.Contains(res[0].Text, "tool_19 (server wide)") || res[1].IsError || res[1].Text != "ran tool_19" {
		t.Fatalf("results = %+v", res)
	}
}
