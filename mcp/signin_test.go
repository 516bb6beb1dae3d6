package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/mcp/mcpauth/oauthtest"
	"github.com/agentd-dev/agentd/tools"
)

func authOf(t *testing.T, set *Set, name string) string {
	t.Helper()
	for _, sv := range set.Servers(context.Background()) {
		if sv.Name == name {
			return sv.Auth
		}
	}
	t.Fatalf("no server %s", name)
	return ""
}

// TestPastedSignInAndSignOutFromTheSet: the set lists a protected server as needing sign-in;
// a sign-in whose browser is on another machine completes with the pasted address; the server
// is then listed as signed in, its tools join, and a sign-out lists it as needing sign-in again.
func TestPastedSignInAndSignOutFromTheSet(t *testing.T) {
	s := oauthtest.New()
	defer s.Close()
	p := NewPool(nil)
	p.OAuth = &mcpauth.Flow{Store: &oauthtest.MemStore{}, CallbackTimeout: 10 * time.Second}
	defer p.Close()
	set := p.OpenSignIn([]Config{
		{Name: "docs", Type: "http", URL: s.URL(), Timeout: 10 * time.Second},
		{Name: "local", Type: "stdio", Command: "true", Timeout: 10 * time.Second},
	}, tools.NewRegistry(), func(_, _, _ string) {}, func(string, error) {})
	defer set.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	set.Snapshot(ctx)
	if got := authOf(t, set, "docs"); got != AuthNeeded {
		t.Fatalf("docs auth %q before any sign-in; want %q", got, AuthNeeded)
	}
	if got := authOf(t, set, "local"); got != "" {
		t.Errorf("a stdio server's auth is %q; want none", got)
	}
	if err := set.CompleteSignIn(ctx, "nope", "http://127.0.0.1:1/oauth/callback?state=x"); err == nil || !strings.Contains(err.Error(), `no MCP server "nope"`) {
		t.Errorf("CompleteSignIn of an unknown server: %v", err)
	}
	if err := set.CompleteSignIn(ctx, "local", "http://127.0.0.1:1/oauth/callback?state=x"); err == nil || !strings.Contains(err.Error(), "only those sign in") {
		t.Errorf("CompleteSignIn of a stdio server: %v", err)
	}
	if err := set.CompleteSignIn(ctx, "docs", "http://127.0.0.1:1/oauth/callback?state=x"); err == nil || !strings.Contains(err.Error(), "no sign-in of it is waiting") {
		t.Errorf("CompleteSignIn with no sign-in under way: %v", err)
	}

	address := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- set.SignIn(ctx, "docs", func(ctx context.Context, u string) error {
			a, err := oauthtest.EndsAt(ctx, u)
			address <- a
			return err
		})
	}()
	if err := set.CompleteSignIn(ctx, "docs", <-address); err != nil {
		t.Fatalf("CompleteSignIn: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("SignIn: %v", err)
	}
	reg := set.Snapshot(ctx)
	if _, ok := reg.Lookup("whoami"); !ok {
		t.Fatalf("no whoami after the pasted sign-in; status %+v", set.Status())
	}
	if got := authOf(t, set, "docs"); got != AuthSignedIn {
		t.Errorf("docs auth %q after the sign-in; want %q", got, AuthSignedIn)
	}

	if _, err := set.SignOut("local"); err == nil {
		t.Error("a stdio server signed out")
	}
	had, err := set.SignOut("docs")
	if err != nil || !had {
		t.Fatalf("SignOut = %v, %v", had, err)
	}
	reg = set.Snapshot(ctx)
	if _, ok := reg.Lookup("whoami"); ok {
		t.Error("whoami still offered after the sign-out")
	}
	if got := authOf(t, set, "docs"); got != AuthNeeded {
		t.Errorf("docs auth %q after the sign-out; want %q", got, AuthNeeded)
	}
	if had, err := set.SignOut("docs"); err != nil || had {
		t.Errorf("a second SignOut = %v, %v; want no tokens", had, err)
	}
}
