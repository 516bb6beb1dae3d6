package editorbridge_test

import (
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/protocol"
)

// An MCP server's question goes to the editor as agent/elicitation/create; only a link the user
// agreed to open is opened, with window/showDocument {external: true}; an answer that is not
// accept, decline or cancel is an error; an editor that does not advertise a mode cannot be asked.
func TestElicitOpensOnlyAnAgreedLink(t *testing.T) {
	var mu sync.Mutex
	var opened []string
	action := "accept"
	opts := fakeeditor.Full()
	opts.Agent.Elicitation = &protocol.ElicitationCapabilities{Form: &struct{}{}, URL: &struct{}{}}
	opts.Elicit = func(p protocol.ElicitationParams) protocol.ElicitationResult {
		mu.Lock()
		defer mu.Unlock()
		if p.Mode == "form" {
			return protocol.ElicitationResult{Action: action, Content: map[string]any{"env": "dev"}}
		}
		return protocol.ElicitationResult{Action: action}
	}
	opts.ShowDocument = func(uri string, external bool) bool {
		mu.Lock()
		defer mu.Unlock()
		if external {
			opened = append(opened, uri)
		}
		return true
	}
	e := setup(t, opts)
	c := e.b.Client()
	if !c.CanElicit("form") || !c.CanElicit("url") || c.CanElicit("other") {
		t.Fatal("CanElicit does not follow the advertised modes")
	}
	res, err := c.Elicit(e.ctx, protocol.ElicitationParams{SessionID: "s1", ToolCallID: "c1", Mode: "form", Message: "Which?"})
	if err != nil || res.Action != "accept" || res.Content["env"] != "dev" {
		t.Fatalf("form: %+v, %v", res, err)
	}
	link := protocol.ElicitationParams{SessionID: "s1", Mode: "url", Message: "Connect", URL: "https://auth.example/x", ElicitationID: "e1"}
	if res, err := c.Elicit(e.ctx, link); err != nil || res.Action != "accept" {
		t.Fatalf("url: %+v, %v", res, err)
	}
	mu.Lock()
	action = "decline"
	mu.Unlock()
	if res, err := c.Elicit(e.ctx, link); err != nil || res.Action != "decline" {
		t.Fatalf("declined url: %+v, %v", res, err)
	}
	mu.Lock()
	if len(opened) != 1 || opened[0] != "https://auth.example/x" {
		t.Fatalf("opened %v; want the agreed link once", opened)
	}
	action = "sure"
	mu.Unlock()
	if _, err := c.Elicit(e.ctx, link); err == nil {
		t.Fatal("an unknown action was taken as an answer")
	}

	plain := setup(t, fakeeditor.Full())
	if plain.b.Client().CanElicit("form") {
		t.Fatal("an editor that advertised no elicitation can be asked")
	}
}
