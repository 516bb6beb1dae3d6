package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/mcp/mcpauth/oauthtest"
	"github.com/agentd-dev/agentd/tools"
)

// TestOAuthTokenNeverLeavesTheOrigin: an Authorization header on a request that a redirect sent
// to another origin is dropped.
func TestOAuthTokenNeverLeavesTheOrigin(t *testing.T) {
	var got string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("Authorization") }))
	defer other.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
	}))
	defer home.Close()
	hc := &http.Client{Transport: newHeaderTransport(home.URL+"/mcp", nil, http.DefaultTransport)}
	req, _ := http.NewRequest(http.MethodGet, home.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "" {
		t.Errorf("the other origin was sent Authorization %q", got)
	}
}

// TestSignInFromTheSet: a protected server's start says it needs sign-in (through the hook, not
// a notice), SignIn starts it again with the token, and its tools join the next snapshot.
func TestSignInFromTheSet(t *testing.T) {
	s := oauthtest.New()
	defer s.Close()
	p := NewPool(nil)
	p.OAuth = &mcpauth.Flow{Store: &oauthtest.MemStore{}, CallbackTimeout: 10 * time.Second}
	defer p.Close()
	var mu sync.Mutex
	var asked []string
	var notices []string
	cfg := Config{Name: "docs", Type: "http", URL: s.URL(), Timeout: 10 * time.Second}
	set := p.OpenSignIn([]Config{cfg}, tools.NewRegistry(), func(_, title, desc string) {
		mu.Lock()
		notices = append(notices, title+": "+desc)
		mu.Unlock()
	}, func(server string, err error) {
		mu.Lock()
		asked = append(asked, server)
		mu.Unlock()
	})
	defer set.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reg := set.Snapshot(ctx)
	if _, ok := reg.Lookup("whoami"); ok {
		t.Fatal("the protected server's tool is offered before any sign-in")
	}
	st := set.Status()
	if len(st) != 1 || !st[0].NeedsSignIn || !strings.Contains(st[0].Err.Error(), "agentd mcp login docs") {
		t.Fatalf("status %+v", st)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0] != "docs" || len(notices) != 0 {
		t.Errorf("sign-in hook %v, notices %v", asked, notices)
	}
	mu.Unlock()
	if err := set.SignIn(ctx, "nope", oauthtest.Browser); err == nil || !strings.Contains(err.Error(), `no MCP server "nope"`) {
		t.Errorf("SignIn of an unknown server: %v", err)
	}
	if err := set.SignIn(ctx, "docs", oauthtest.Browser); err != nil {
		t.Fatal(err)
	}
	reg = set.Snapshot(ctx)
	tool, ok := reg.Lookup("whoami")
	if !ok {
		t.Fatalf("no whoami after the sign-in; status %+v", set.Status())
	}
	res, err := tool.(*Tool).sv.call(ctx, "whoami", nil)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
}

func TestStaticBearerHeaderKeepsWorking(t *testing.T) {
	p := NewPool(nil)
	p.OAuth = &mcpauth.Flow{Store: &oauthtest.MemStore{}}
	defer p.Close()
	sv := newServer(p, Config{Name: "x", Type: "http", URL: "http://127.0.0.1:1/mcp", Headers: []NameValue{{"Authorization", "Bearer static"}}})
	defer sv.shutdown()
	if sv.auth != nil {
		t.Error("a server with its own Authorization header got an OAuth handler")
	}
	if err := sv.signIn(context.Background(), oauthtest.Browser); err == nil || !strings.Contains(err.Error(), "sends its own Authorization header") {
		t.Errorf("signIn: %v", err)
	}
}
