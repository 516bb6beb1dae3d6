package session

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd-dev/agentd/protocol"
)

// elicitors holds the fake clients that show MCP questions, and how each answers (fakeClient is
// the harness's; a client not here shows none).
var elicitors sync.Map // *fakeClient → func(protocol.ElicitationParams) protocol.ElicitationResult

func (c *fakeClient) CanElicit(mode string) bool {
	_, ok := elicitors.Load(c)
	return ok
}

func (c *fakeClient) Elicit(_ context.Context, p protocol.ElicitationParams) (protocol.ElicitationResult, error) {
	f, ok := elicitors.Load(c)
	if !ok {
		return protocol.ElicitationResult{}, nil
	}
	return f.(func(protocol.ElicitationParams) protocol.ElicitationResult)(p), nil
}

// mcpAskServer's tool asks which environment to deploy to, and reports the answer.
func mcpAskServer(t *testing.T) json.RawMessage {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "deploy", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "deploy", Description: "Deploys.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			resp, ok := r.Params.InputResponses["env"]
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"env": &sdk.ElicitParams{Mode: "form", Message: "Which environment?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string"}}}}}}, nil
			}
			er, _ := resp.(*sdk.ElicitResult)
			b, _ := json.Marshal(er.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: er.Action + " " + string(b)}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	entry, _ := json.Marshal(map[string]any{"type": "http", "name": "deploy", "url": ts.URL, "headers": []any{}})
	return entry
}

// A server's question during a call goes to the session's client tied to the call (session,
// tool call id, the server's name), and the answer goes back to the server; a client that does
// not show questions has them declined without being asked.
func TestMCPElicitationGoesToTheClient(t *testing.T) {
	call := func(id string) reply { return reply{events: callsReply(tc{id, "deploy", `{}`})} }
	h := newHarness(t, call("c1"), reply{events: textReply("ok")}, call("c2"), reply{events: textReply("ok")})
	entry := mcpAskServer(t)
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	h.newSessionWith(entry)
	h.client.answer = answerWith(protocol.OptionAllowOnce)
	var asked []protocol.ElicitationParams
	var mu sync.Mutex
	elicitors.Store(h.client, func(p protocol.ElicitationParams) protocol.ElicitationResult {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		return protocol.ElicitationResult{Action: "accept", Content: map[string]any{"env": "staging"}}
	})
	t.Cleanup(func() { elicitors.Delete(h.client) })
	h.prompt("deploy it")
	res := toolResults(h.m.sessions[h.sid].historySnapshot())
	if len(res) != 1 || res[0].Text != `accept {"env":"staging"}` {
		t.Fatalf("results = %+v", res)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0].SessionID != h.sid || asked[0].ToolCallID != "c1" || asked[0].Mode != "form" ||
		asked[0].Meta[protocol.MetaMCPServer] != "deploy" || !strings.Contains(string(asked[0].RequestedSchema), `"env"`) {
		t.Fatalf("asked = %+v", asked)
	}
	mu.Unlock()

	elicitors.Delete(h.client)
	h.prompt("again")
	res = toolResults(h.m.sessions[h.sid].historySnapshot())
	if len(res) != 2 || res[1].Text != "decline null" {
		t.Fatalf("without a client that shows questions: %+v", res)
	}
}
