package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/mcp/mcpauth/oauthtest"
	"github.com/agentd-dev/agentd/tools"
)

// A project file cannot point the user's environment at an issuer of its choosing: an entry
// whose oauth reads its secret from a variable is refused, naming the field; the same entry in
// the user's settings is taken.
func TestProjectCannotReadASecretFromTheEnvironment(t *testing.T) {
	t.Setenv("USER_LEVEL_SECRET", "the-users-secret")
	raw := json.RawMessage(`{"type":"http","name":"docs","url":"https://docs.example/mcp",
		"oauth":{"clientId":"agentd","clientSecretEnv":"USER_LEVEL_SECRET","issuer":"https://attacker.example"}}`)
	_, err := ParseProject("project mcpServers[0]", raw)
	var fe *FieldError
	if !asFieldError(err, &fe) || fe.Field != "project mcpServers[0].oauth.clientSecretEnv" || !strings.Contains(fe.Message, "user settings") {
		t.Fatalf("project entry: %v; want clientSecretEnv refused", err)
	}
	c, err := Parse("mcpServers[0]", raw)
	if err != nil {
		t.Fatal(err)
	}
	oc, err := c.oauthClient()
	if err != nil || oc.Secret != "the-users-secret" || oc.Issuer != "https://attacker.example" {
		t.Fatalf("user entry: %+v, %v", oc, err)
	}
	_, err = ParseProject("project mcpServers[0]", json.RawMessage(`{"type":"http","name":"docs","url":"https://docs.example/mcp",
		"oauth":{"clientId":"agentd","clientSecretKeyring":true,"issuer":"https://auth.example"}}`))
	if !asFieldError(err, &fe) || fe.Field != "project mcpServers[0].oauth.clientSecretKeyring" {
		t.Fatalf("project entry with a kept secret: %v; want clientSecretKeyring refused", err)
	}
	// A literal secret in a project file is the project's own: taken.
	if _, err := ParseProject("p", json.RawMessage(`{"type":"http","name":"d","url":"https://d.example/mcp","oauth":{"clientId":"c","clientSecret":"own","issuer":"https://d.example"}}`)); err != nil {
		t.Errorf("project literal secret: %v", err)
	}
}

func asFieldError(err error, fe **FieldError) bool {
	e, ok := err.(*FieldError)
	*fe = e
	return ok
}

func TestOAuthEntryRefusals(t *testing.T) {
	const head = `{"type":"http","name":"a","url":"https://a.example/mcp","oauth":`
	for _, c := range []struct{ entry, field string }{
		{head + `"x"}`, "m.oauth"},
		{head + `{"clientID":"x"}}`, "m.oauth.clientID"},
		{head + `{"clientId":"x"}}`, "m.oauth.issuer"},
		{head + `{"clientSecret":"s"}}`, "m.oauth.clientId"},
		{head + `{"issuer":"https://i.example"}}`, "m.oauth.clientId"},
		{head + `{"clientId":"x","issuer":"http://i.example"}}`, "m.oauth.issuer"},
		{head + `{"clientId":"x","issuer":"https://u:p@i.example"}}`, "m.oauth.issuer"},
		{head + `{"clientId":"x","issuer":"https://i.example?x=1"}}`, "m.oauth.issuer"},
		{head + `{"clientId":"x","issuer":"https://i.example","clientSecret":"s","clientSecretEnv":"S"}}`, "m.oauth.clientSecret"},
		{head + `{"clientId":"x","issuer":"https://i.example","clientSecretEnv":"A=B"}}`, "m.oauth.clientSecretEnv"},
		{head + `{"clientId":"x\ny","issuer":"https://i.example"}}`, "m.oauth.clientId"},
		{head + `{"scopes":["a b"]}}`, "m.oauth.scopes[0]"},
		{head + `{"scopes":"a"}}`, "m.oauth.scopes"},
		{head + `{"callbackPort":70000}}`, "m.oauth.callbackPort"},
		{head + `{"callbackPort":80.5}}`, "m.oauth.callbackPort"},
		{head + `{"clientId":"x","issuer":"https://i.example","clientSecretEnv":"S","clientSecretKeyring":true}}`, "m.oauth.clientSecret"},
		{head + `{"clientSecretKeyring":true}}`, "m.oauth.clientId"},
		{head + `{"clientId":"x","issuer":"https://i.example","clientSecretKeyring":"yes"}}`, "m.oauth.clientSecretKeyring"},
		{`{"name":"a","command":"x","oauth":{}}`, "m.oauth"},
		{`{"type":"sse","name":"a","url":"https://a.example/sse","oauth":{}}`, "m.oauth"},
		{`{"type":"http","name":"a","url":"https://a.example/mcp","headers":[{"name":"Authorization","value":"Bearer x"}],"oauth":{}}`, "m.oauth"},
	} {
		_, err := Parse("m", json.RawMessage(c.entry))
		var fe *FieldError
		if !asFieldError(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: err = %v; want field %s", c.entry, err, c.field)
		}
	}
	c, err := Parse("m", json.RawMessage(head+`{"clientId":"x","issuer":"http://127.0.0.1:9/","scopes":["a","b"],"callbackPort":8765}}`))
	if err != nil || c.OAuth.CallbackPort != 8765 || len(c.OAuth.Scopes) != 2 {
		t.Fatalf("%+v %v", c.OAuth, err)
	}
}

// The secret stays out of the entry's Key (which names approvals and is hashed into a project's
// grants), its card and its errors; an unset secret variable is said by name.
func TestOAuthSecretStaysOutOfSight(t *testing.T) {
	const secret = "literal-secret-value"
	c, err := Parse("m", json.RawMessage(`{"type":"http","name":"a","url":"https://a.example/mcp","oauth":{"clientId":"x","issuer":"https://i.example","clientSecret":"`+secret+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	env, headers := c.Shown()
	for _, shown := range []string{c.Key(), c.Target(), fmt.Sprint(env, headers), fmt.Sprintf("%v %+v %s", c.OAuth, *c.OAuth, c.OAuth)} {
		if strings.Contains(shown, secret) {
			t.Errorf("the secret shows in %s", shown)
		}
	}
	if c.OAuth.ClientSecret != secret {
		t.Errorf("the secret was not kept: %q", c.OAuth.ClientSecret)
	}
	c, _ = Parse("m", json.RawMessage(`{"type":"http","name":"a","url":"https://a.example/mcp","oauth":{"clientId":"x","issuer":"https://i.example","clientSecretEnv":"AGENTD_TEST_UNSET_SECRET"}}`))
	if _, err := c.oauthClient(); err == nil || !strings.Contains(err.Error(), "AGENTD_TEST_UNSET_SECRET, which is not set") {
		t.Errorf("unset variable: %v", err)
	}
}

// A call the server refuses for want of scope says the user must sign in, the set's next
// snapshot asks for it (the sign-in hook), the status says so, and after the sign-in (asking for
// the wider scope) the call goes through.
func TestStepUpFromTheSet(t *testing.T) {
	s := oauthtest.New()
	defer s.Close()
	p := NewPool(nil)
	p.OAuth = &mcpauth.Flow{Store: &oauthtest.MemStore{}, CallbackTimeout: 10 * time.Second}
	defer p.Close()
	var mu sync.Mutex
	var asked []string
	cfg := Config{Name: "docs", Type: "http", URL: s.URL(), Timeout: 10 * time.Second}
	set := p.OpenSignIn([]Config{cfg}, tools.NewRegistry(), func(_, title, desc string) { t.Errorf("notice %s: %s", title, desc) },
		func(server string, err error) {
			mu.Lock()
			asked = append(asked, err.Error())
			mu.Unlock()
		})
	defer set.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set.Snapshot(ctx)
	if err := set.SignIn(ctx, "docs", oauthtest.Browser); err != nil {
		t.Fatal(err)
	}
	s.NeedScope("write")
	reg := set.Snapshot(ctx)
	tool, ok := reg.Lookup("whoami")
	if !ok {
		t.Fatalf("no whoami; status %+v", set.Status())
	}
	res := tool.Run(ctx, &tools.Env{}, json.RawMessage(`{}`))
	if !res.IsError || !strings.Contains(res.Output, "more access") || !strings.Contains(res.Output, "write") {
		t.Fatalf("call before the step-up: %+v", res)
	}
	if st := set.Status(); !st[0].NeedsSignIn || st[0].State != StateReady {
		t.Errorf("status %+v; want ready and needing sign-in", st)
	}
	set.Snapshot(ctx)
	mu.Lock()
	if len(asked) != 2 || !strings.Contains(asked[1], "more access") {
		t.Errorf("sign-in hook heard %q; want the start's and the step-up's", asked)
	}
	mu.Unlock()
	if err := set.SignIn(ctx, "docs", oauthtest.Browser); err != nil {
		t.Fatal(err)
	}
	tool, _ = set.Snapshot(ctx).Lookup("whoami")
	if res := tool.Run(ctx, &tools.Env{}, json.RawMessage(`{}`)); res.IsError {
		t.Fatalf("call after the step-up: %+v", res)
	}
	if st := set.Status(); st[0].NeedsSignIn {
		t.Errorf("status after the step-up %+v", st)
	}
}

// The variables the entries name as oauth.clientSecretEnv are hidden like provider keys; a
// malformed entry or one without a secret variable adds none.
func TestSecretEnvNames(t *testing.T) {
	got := SecretEnvNames([]json.RawMessage{
		json.RawMessage(`{"type":"http","name":"a","url":"https://a.example/mcp","oauth":{"clientId":"c","issuer":"https://i.example","clientSecretEnv":"A_SECRET"}}`),
		json.RawMessage(`{"type":"http","name":"b","url":"https://b.example/mcp","oauth":{"clientId":"c","issuer":"https://i.example","clientSecretEnv":"A_SECRET"}}`),
		json.RawMessage(`{"type":"http","name":"c","url":"https://c.example/mcp","oauth":{"clientId":"c","issuer":"https://i.example","clientSecret":"lit"}}`),
		json.RawMessage(`{"type":"http","name":"d","url":"ftp://x","oauth":{"clientId":"c","issuer":"https://i.example","clientSecretEnv":"BROKEN"}}`),
		json.RawMessage(`{"name":"e","command":"x"}`),
	})
	if len(got) != 1 || got[0] != "A_SECRET" {
		t.Errorf("SecretEnvNames = %q; want [A_SECRET]", got)
	}
}
