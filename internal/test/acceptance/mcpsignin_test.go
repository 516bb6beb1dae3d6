package acceptance_test

// docs/protocol.md "Signing in from a remote editor", through the real binary: the fake editor's
// browser is on another machine, so agentd's loopback callback never comes; the address the
// browser ended on, pasted, completes the sign-in, and the MCP list offers Sign out after it.

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/mcp/mcpauth/oauthtest"
	"github.com/agentd-dev/agentd/protocol"
)

func TestMCPSignInByPastedAddress(t *testing.T) {
	t.Parallel()
	s := oauthtest.New()
	defer s.Close()
	ended := make(chan string, 1)
	opts := fakeeditor.Full()
	opts.ShowDocument = func(uri string, external bool) bool {
		a, err := oauthtest.EndsAt(context.Background(), uri)
		if err != nil {
			t.Errorf("the authorization page: %v", err)
			return false
		}
		ended <- a
		return true
	}
	e := start(t, opts, replay(t, responses(map[string]any{"text": "done"})))
	sid := e.newSessionMCP(map[string]any{"type": "http", "name": "docs", "url": s.URL(), "headers": []any{}})
	e.ed.WaitUpdate("the sign-in notice", func(n protocol.SessionNotification) bool {
		return n.SessionID == sid && n.Update.Meta[protocol.MetaMCPSignIn] != nil
	})
	auth := func() string {
		var res protocol.MCPServersResult
		if err := e.ed.Call(ctxT(t), protocol.MethodMCPServers, protocol.SessionIDParams{SessionID: sid}, &res); err != nil || len(res.Servers) != 1 {
			t.Fatalf("agent/x/mcp/servers: %v %+v", err, res)
		}
		return res.Servers[0].Auth
	}
	if got := auth(); got != "needed" {
		t.Errorf("auth %q before the sign-in; want needed", got)
	}
	if code, msg := e.callError(protocol.MethodMCPCompleteSignIn, map[string]any{"sessionId": sid, "server": "docs", "callbackUrl": "http://127.0.0.1:1/oauth/callback?code=c&state=s"}); code == 0 || !strings.Contains(msg, "no sign-in of it is waiting") {
		t.Errorf("a paste with no sign-in under way: %d %q", code, msg)
	}

	signedIn := make(chan error, 1)
	go func() {
		var res protocol.MCPSignInResult
		signedIn <- e.ed.Call(ctxT(t), protocol.MethodMCPSignIn, protocol.MCPSignInParams{SessionID: sid, Server: "docs"}, &res)
	}()
	address := <-ended
	u, _ := url.Parse(address)
	q := u.Query()
	q.Set("state", "forged")
	u.RawQuery = q.Encode()
	if code, msg := e.callError(protocol.MethodMCPCompleteSignIn, map[string]any{"sessionId": sid, "server": "docs", "callbackUrl": u.String()}); code == 0 || !strings.Contains(msg, "state agentd did not send") {
		t.Errorf("a forged state: %d %q", code, msg)
	}
	if code, msg := e.callError(protocol.MethodMCPCompleteSignIn, map[string]any{"sessionId": sid, "server": "docs"}); code != -32602 || !strings.Contains(msg, "callbackUrl") {
		t.Errorf("no callbackUrl: %d %q", code, msg)
	}
	var res protocol.MCPSignInResult
	if err := e.ed.Call(ctxT(t), protocol.MethodMCPCompleteSignIn, protocol.MCPCompleteSignInParams{SessionID: sid, Server: "docs", CallbackURL: address}, &res); err != nil || res.Server != "docs" {
		t.Fatalf("agent/x/mcp/completeSignIn: %v %+v", err, res)
	}
	if err := <-signedIn; err != nil {
		t.Fatalf("the waiting agent/mcp/signIn: %v", err)
	}
	if code, msg := e.callError(protocol.MethodMCPCompleteSignIn, map[string]any{"sessionId": sid, "server": "docs", "callbackUrl": address}); code == 0 || !strings.Contains(msg, "already used") {
		t.Errorf("the address replayed: %d %q", code, msg)
	}
	e.prompt(sid, "hello") // a turn's snapshot waits for the server's new start
	if got := auth(); got != "signedIn" {
		t.Errorf("auth %q after the sign-in; want signedIn", got)
	}
	var out protocol.MCPSignOutResult
	if err := e.ed.Call(ctxT(t), protocol.MethodMCPSignOut, protocol.MCPSignOutParams{SessionID: sid, Server: "docs"}, &out); err != nil || !out.HadTokens {
		t.Fatalf("agent/x/mcp/signOut: %v %+v", err, out)
	}
}
