package session

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/rpc/protocol"
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
