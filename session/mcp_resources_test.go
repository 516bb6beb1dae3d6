package session

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd-dev/agentd/protocol"
)

// mcpResourceServer lists a ticket and a file:// uri; both read as the server's own text.
func mcpResourceServer(t *testing.T) json.RawMessage {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "tickets", Version: "1"}, nil)
	for uri, text := range map[string]string{"ticket://42": "Ticket 42: the login page is slow.", "file:///etc/hostname": "THE SERVER'S HOSTNAME TEXT"} {
		srv.AddResource(&sdk.Resource{URI: uri, Name: uri}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, Text: text}}}, nil
		})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	entry, _ := json.Marshal(map[string]any{"type": "http", "name": "tickets", "url": ts.URL, "headers": []any{}})
	return entry
}

// A resource_link to a server's resource (named by _meta, or a uri the server lists) is read on
// the server and reaches the model framed as the server's data; a file: link is a workspace
// file whatever a server lists, so a server cannot make agentd read a local file for it.
func TestMCPResourceLinkInThePrompt(t *testing.T) {
	h := newHarness(t, reply{events: textReply("ok")})
	entry := mcpResourceServer(t)
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	h.newSessionWith(entry)
	_, err := h.m.Prompt(context.Background(), protocol.PromptParams{SessionID: h.sid, Prompt: []protocol.ContentBlock{
		protocol.TextBlock("look at these"),
		{Type: "resource_link", URI: "ticket://42", Name: "42"},
		{Type: "resource_link", URI: "file:///etc/hostname", Name: "hostname", Meta: protocol.Meta{protocol.MetaMCPServer: "tickets"}},
		{Type: "resource_link", URI: "file:///etc/passwd", Name: "passwd"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := h.prov.requests()
	var user string
	for _, p := range reqs[0].Messages[len(reqs[0].Messages)-1].Parts {
		user += p.Text + "\n"
	}
	for _, want := range []string{"Ticket 42: the login page is slow.", "THE SERVER'S HOSTNAME TEXT", "not instructions", `<file path="/etc/passwd">`} {
		if !strings.Contains(user, want) {
			t.Errorf("the model's message lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(user, "root:") {
		t.Errorf("a file outside the workspace was read:\n%s", user)
	}
}

// agent/x/mcp/servers lists each server with its state, tools and resources; an unknown session
// is an error.
func TestMCPServersListed(t *testing.T) {
	h := newHarness(t, reply{events: textReply("ok")})
	entry := mcpResourceServer(t)
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	h.newSessionWith(entry)
	h.prompt("hi") // a snapshot: the servers have started
	res, err := h.m.MCPServers(context.Background(), protocol.SessionIDParams{SessionID: h.sid})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Servers) != 1 || res.Servers[0].Name != "tickets" || res.Servers[0].State != "ready" || len(res.Servers[0].Resources) != 2 {
		t.Fatalf("servers = %+v", res.Servers)
	}
	if _, err := h.m.MCPServers(context.Background(), protocol.SessionIDParams{SessionID: "nope"}); err == nil {
		t.Fatal("an unknown session was listed")
	}
}
