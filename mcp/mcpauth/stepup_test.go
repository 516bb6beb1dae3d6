package mcpauth_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/mcp/mcpauth/oauthtest"
)

// call is whoami's answer, or its error.
func call(cs *sdk.ClientSession) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*sdk.TextContent).Text, nil
}

// authorizations are the authorization requests made at issuer, by their scope.
func authorizations(s *oauthtest.Server, issuer string) []string {
	var out []string
	for _, r := range s.AuthRequests(issuer) {
		if strings.Contains(r, " /authorize ") {
			_, scope, _ := strings.Cut(r, " scope=")
			scope, _, _ = strings.Cut(scope, " basic=")
			out = append(out, scope)
		}
	}
	return out
}

func signInWith(t *testing.T, h *mcpauth.Handler, open mcpauth.Opener) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if open == nil {
		open = oauthtest.Browser
	}
	return h.SignIn(ctx, open, nil)
}

// A server that keeps answering 403 insufficient_scope for a scope the token was already asked
// with gets one step-up sign-in, never a loop: the next refusal is an error, not another sign-in.
func TestStepUpNeverLoops(t *testing.T) {
	s, f, _ := setup(t)
	s.NeedScope("write")
	s.Grant = func(asked []string) []string { // a stingy authorization server: never grants write
		return slices.DeleteFunc(slices.Clone(asked), func(x string) bool { return x == "write" })
	}
	h := f.Handler("docs", s.URL())
	if err := signInWith(t, h, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := connect(t, s.URL(), h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(cs); !mcpauth.IsNeedsSignIn(err) {
		t.Fatalf("a 403 for a new scope: err = %v; want a step-up sign-in asked for", err)
	}
	if err := signInWith(t, h, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err := call(cs)
		if err == nil || mcpauth.IsNeedsSignIn(err) || !strings.Contains(err.Error(), "already asked with") {
			t.Fatalf("a 403 for a scope already asked for: err = %v; want a refusal that asks no sign-in", err)
		}
	}
	if got := authorizations(s, s.AS.URL); len(got) != 2 {
		t.Errorf("%d authorization requests (%q); want 2: the sign-in and one step-up", len(got), got)
	}
}

// A server that grows its scope request without end is refused past maxScopes.
func TestStepUpScopesBounded(t *testing.T) {
	s, f, _ := setup(t)
	h := f.Handler("docs", s.URL())
	if err := signInWith(t, h, nil); err != nil {
		t.Fatal(err)
	}
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf("s%d", i)
	}
	s.NeedScope(strings.Join(many, " "))
	cs, err := connect(t, s.URL(), h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(cs); err == nil || mcpauth.IsNeedsSignIn(err) || !strings.Contains(err.Error(), "more than 32 scopes") {
		t.Fatalf("err = %v; want a refusal of the 40 scopes", err)
	}
}

// A 403 that is not insufficient_scope, or names no scope, asks for no sign-in.
func TestForbiddenWithoutScopeAsksNothing(t *testing.T) {
	for _, hdr := range []string{`Bearer error="invalid_token"`, `Bearer error="insufficient_scope"`} {
		rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", hdr)
			w.WriteHeader(http.StatusForbidden)
		}))
		f := &mcpauth.Flow{Store: &oauthtest.MemStore{}}
		h := f.Handler("docs", rs.URL+"/mcp")
		req, _ := http.NewRequest(http.MethodPost, rs.URL+"/mcp", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		err = h.Authorize(context.Background(), req, resp)
		rs.Close()
		if err == nil || mcpauth.IsNeedsSignIn(err) {
			t.Errorf("%s: err = %v; want a refusal", hdr, err)
		}
	}
}

// The step-up: a 403 insufficient_scope for a scope the token lacks says sign-in is needed for
// the union of the scopes held and asked; the sign-in asks for that union, and the same
// connection then goes on with the new token.
func TestStepUpAsksForTheUnion(t *testing.T) {
	s, f, _ := setup(t)
	h := f.Handler("docs", s.URL())
	if err := signInWith(t, h, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := connect(t, s.URL(), h)
	if err != nil {
		t.Fatal(err)
	}
	first, err := call(cs)
	if err != nil {
		t.Fatal(err)
	}
	s.NeedScope("write")
	_, err = call(cs)
	var ns *mcpauth.NeedsSignIn
	if !errors.As(err, &ns) || !slices.Contains(ns.Scopes, "mcp") || !slices.Contains(ns.Scopes, "write") || !strings.Contains(ns.Error(), "more access") {
		t.Fatalf("err = %v; want a step-up sign-in for mcp and write", err)
	}
	if h.NeedsSignIn() == nil {
		t.Error("the handler does not say it needs a sign-in")
	}
	if err := signInWith(t, h, nil); err != nil {
		t.Fatal(err)
	}
	got := authorizations(s, s.AS.URL)
	if len(got) != 2 || !slices.Contains(strings.Fields(got[1]), "mcp") || !slices.Contains(strings.Fields(got[1]), "write") {
		t.Fatalf("authorization requests by scope: %q; want the second to ask for mcp and write", got)
	}
	second, err := call(cs)
	if err != nil || second == first {
		t.Fatalf("after the step-up: %q, %v; want a call with the new token", second, err)
	}
	if h.NeedsSignIn() != nil {
		t.Error("after the step-up the handler still says it needs a sign-in")
	}
}

// freePort is a loopback port nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// A client registered with one authorization server is never presented to another: a server
// whose metadata names another issuer (a project's server, a server that moved, an attacker's)
// gets no authorization request and no token request, the browser is not opened, and the
// secret is in no error or log line.
func TestPreRegisteredSecretStaysWithItsIssuer(t *testing.T) {
	s, f, st := setup(t)
	core, logs := observer.New(zap.DebugLevel)
	f.Log = zap.New(core)
	const secret = "s3cr3t-value-of-the-user"
	var hit atomic.Bool
	legit := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit.Store(true) }))
	defer legit.Close()
	c := &mcpauth.Client{Issuer: legit.URL, ID: "pre", Secret: secret}
	var opened atomic.Bool
	h := f.HandlerWith("docs", s.URL(), c)
	err := signInWith(t, h, func(context.Context, string) error { opened.Store(true); return nil })
	if err == nil || !strings.Contains(err.Error(), "registered with "+legit.URL) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v; want the sign-in refused, naming the client's issuer", err)
	}
	if opened.Load() {
		t.Error("the browser was opened for another issuer")
	}
	for _, r := range s.AuthRequests(s.AS.URL) {
		if strings.Contains(r, "client=pre") || strings.Contains(r, "/token") || strings.Contains(r, "/authorize") || strings.Contains(r, "/register") {
			t.Errorf("the other authorization server was asked %q", r)
		}
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(c.String(), secret) || strings.Contains(fmt.Sprint(c), secret) {
		t.Error("the secret is in the error or the client's string")
	}
	for _, e := range logs.All() {
		if strings.Contains(fmt.Sprint(e.Message, e.ContextMap()), secret) {
			t.Errorf("the secret was logged: %v", e)
		}
	}
	if len(st.M) != 0 {
		t.Errorf("a refused sign-in stored %v", st.M)
	}
	// A server's start (no one to ask) says the same, and asks no sign-in.
	cs, err := connect(t, s.URL(), h)
	if err == nil {
		cs.Close()
		t.Fatal("connected")
	}
	if h.NeedsSignIn() != nil || !strings.Contains(err.Error(), "registered with") {
		t.Errorf("start: %v (needs sign-in %v); want the misplaced client said", err, h.NeedsSignIn())
	}
}

// A pre-registered client takes precedence over a Client ID Metadata Document and dynamic
// registration: its ID and secret go by HTTP Basic (what the metadata offers), its callback
// port is the listener's, its scopes are asked for.
func TestPreRegisteredClientUsed(t *testing.T) {
	s, f, st := setup(t)
	f.ClientIDURL = "https://agentd.example/oauth/client.json"
	core, logs := observer.New(zap.DebugLevel)
	f.Log = zap.New(core)
	const secret = "pre-registered-secret"
	s.NoRegistration = true
	s.Clients = map[string]string{"pre": secret}
	s.Meta = func(m map[string]any) { m["token_endpoint_auth_methods_supported"] = []string{"client_secret_basic"} }
	port := freePort(t)
	h := f.HandlerWith("docs", s.URL(), &mcpauth.Client{Issuer: s.AS.URL + "/", ID: "pre", Secret: secret, Scopes: []string{"mcp", "extra"}, CallbackPort: port})
	var opened string
	if err := signInWith(t, h, func(ctx context.Context, u string) error { opened = u; return oauthtest.Browser(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	au, _ := url.Parse(opened)
	q := au.Query()
	if q.Get("client_id") != "pre" || q.Get("redirect_uri") != fmt.Sprintf("http://127.0.0.1:%d/oauth/callback", port) || !slices.Contains(strings.Fields(q.Get("scope")), "extra") {
		t.Errorf("authorization URL %s", opened)
	}
	var basic bool
	for _, r := range s.AuthRequests(s.AS.URL) {
		if strings.Contains(r, " /token ") {
			basic = strings.Contains(r, "client=pre") && strings.Contains(r, "basic=true")
		}
		if strings.Contains(r, "/register") {
			t.Errorf("registered dynamically: %s", r)
		}
	}
	if !basic {
		t.Errorf("the token request did not authenticate the client by HTTP Basic: %q", s.AuthRequests(s.AS.URL))
	}
	cs, err := connect(t, s.URL(), f.HandlerWith("docs", s.URL(), &mcpauth.Client{Issuer: s.AS.URL, ID: "pre", Secret: secret}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(cs); err != nil {
		t.Fatal(err)
	}
	for _, e := range logs.All() {
		if strings.Contains(fmt.Sprint(e.Message, e.ContextMap()), secret) {
			t.Errorf("the secret was logged: %v", e)
		}
	}
	if len(st.M) == 0 {
		t.Error("nothing stored")
	}
}

// The secret goes in the form when the authorization server takes only client_secret_post, and
// a server that takes neither way is refused before the browser opens.
func TestPreRegisteredSecretStyle(t *testing.T) {
	s, f, _ := setup(t)
	s.Meta = func(m map[string]any) { m["token_endpoint_auth_methods_supported"] = []string{"private_key_jwt"} }
	var opened atomic.Bool
	err := signInWith(t, f.HandlerWith("docs", s.URL(), &mcpauth.Client{Issuer: s.AS.URL, ID: "pre", Secret: "x"}),
		func(context.Context, string) error { opened.Store(true); return nil })
	if err == nil || !strings.Contains(err.Error(), "neither by client_secret_basic nor client_secret_post") || opened.Load() {
		t.Fatalf("err = %v (browser opened: %v)", err, opened.Load())
	}
	// A public pre-registered client (no secret) sends its ID in the form.
	s.Meta = nil
	if err := signInWith(t, f.HandlerWith("docs", s.URL(), &mcpauth.Client{Issuer: s.AS.URL, ID: "public-pre"}), nil); err != nil {
		t.Fatal(err)
	}
	if reg, _ := s.Counts(); reg != 0 {
		t.Errorf("%d dynamic registrations; want none", reg)
	}
}

// A callback port that is taken is said, not worked around (the redirect URI is registered).
func TestPreRegisteredCallbackPortTaken(t *testing.T) {
	s, f, _ := setup(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	err = signInWith(t, f.HandlerWith("docs", s.URL(), &mcpauth.Client{Issuer: s.AS.URL, ID: "pre", CallbackPort: port}), nil)
	if err == nil || !strings.Contains(err.Error(), "opening the sign-in listener failed") {
		t.Fatalf("err = %v", err)
	}
}

// The resource moves to another authorization server: the old issuer's token is not sent to
// the resource again, neither its client ID nor its refresh token reaches the new one, and the
// sign-in registers with the new one.
func TestMigrationNeverCarriesTheOldCredentials(t *testing.T) {
	s, f, st := setup(t)
	h := f.Handler("docs", s.URL())
	if err := signInWith(t, h, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := connect(t, s.URL(), h)
	if err != nil {
		t.Fatal(err)
	}
	first, err := call(cs)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.TrimPrefix(first, "token ")
	s.Migrate()
	_, err = call(cs)
	var ns *mcpauth.NeedsSignIn
	if !errors.As(err, &ns) || ns.Issuer != s.AS2.URL || ns.Was != s.AS.URL || !strings.Contains(ns.Error(), "authorization server is now") {
		t.Fatalf("err = %v; want a sign-in at the new authorization server", err)
	}
	seen := len(s.SeenTokens())
	if _, err := call(cs); !mcpauth.IsNeedsSignIn(err) {
		t.Fatalf("second call: %v", err)
	}
	for _, tok := range s.SeenTokens()[seen:] {
		if tok == old {
			t.Error("the old issuer's token was sent again after the move")
		}
	}
	for _, r := range s.AuthRequests(s.AS2.URL) {
		if !strings.Contains(r, "/.well-known/") {
			t.Errorf("the new authorization server was asked %q before any sign-in", r)
		}
	}
	if err := signInWith(t, h, nil); err != nil {
		t.Fatal(err)
	}
	var registered bool
	for _, r := range s.AuthRequests(s.AS2.URL) {
		registered = registered || strings.Contains(r, " /register ")
	}
	if !registered {
		t.Errorf("no registration at the new authorization server: %q", s.AuthRequests(s.AS2.URL))
	}
	if n := s.MisdirectedCount(); n != 0 {
		t.Errorf("%d requests carried the old authorization server's client or refresh token to the new one", n)
	}
	got, err := call(cs)
	if err != nil || got == first {
		t.Fatalf("after the sign-in at the new server: %q, %v", got, err)
	}
	if _, ok := st.M[s.AS2.URL+" "+s.URL()]; !ok {
		t.Errorf("the new token is not filed under the new issuer: %v", st.M)
	}
}

// A pre-registered client stays with its issuer when the resource moves: the move is an error
// that names both, not a sign-in elsewhere with the client's secret.
func TestMigrationWithPreRegisteredClient(t *testing.T) {
	s, f, _ := setup(t)
	const secret = "pre-secret"
	s.Clients = map[string]string{"pre": secret}
	c := &mcpauth.Client{Issuer: s.AS.URL, ID: "pre", Secret: secret}
	h := f.HandlerWith("docs", s.URL(), c)
	if err := signInWith(t, h, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := connect(t, s.URL(), h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(cs); err != nil {
		t.Fatal(err)
	}
	s.Migrate()
	if _, err := call(cs); err == nil || mcpauth.IsNeedsSignIn(err) || !strings.Contains(err.Error(), "registered with "+s.AS.URL) {
		t.Fatalf("err = %v; want the move refused for the pre-registered client", err)
	}
	if err := signInWith(t, h, nil); err == nil || !strings.Contains(err.Error(), "change oauth.issuer") {
		t.Fatalf("sign-in after the move: %v", err)
	}
	for _, r := range s.AuthRequests(s.AS2.URL) {
		if strings.Contains(r, "client=pre") || !strings.Contains(r, "/.well-known/") {
			t.Errorf("the new authorization server was asked %q", r)
		}
	}
}

// A scope is an RFC 6749 scope-token or nothing: one with an escape sequence (it would reach the
// user's notice) or outside ASCII is refused, in the resource metadata and in a step-up's
// challenge alike, and nothing is asked.
func TestHostileScopesRefused(t *testing.T) {
	s, f, st := setup(t)
	s.PRM = func(m map[string]any) { m["scopes_supported"] = []string{"mcp", "\x1b[2Jred"} }
	s.Redirect = nil
	var opened atomic.Bool
	refused(t, s, f, st, func(context.Context, string) error { opened.Store(true); return nil }, "not an OAuth scope token")
	if opened.Load() {
		t.Error("the browser was opened")
	}
	s.PRM = nil
	h := f.Handler("docs", s.URL())
	if err := signInWith(t, h, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := connect(t, s.URL(), h)
	if err != nil {
		t.Fatal(err)
	}
	s.NeedScope("écrire")
	if _, err := call(cs); err == nil || mcpauth.IsNeedsSignIn(err) || !strings.Contains(err.Error(), "not an OAuth scope token") {
		t.Fatalf("a step-up for a non-ASCII scope: %v", err)
	}
}

// A secret agentd keeps is filed by issuer and client ID: a client that names another issuer
// (here the server's, while the secret was kept for a legitimate one) finds none and asks for
// nothing; the client of the right issuer uses it.
func TestStoredSecretFiledByIssuer(t *testing.T) {
	s, f, st := setup(t)
	const secret = "kept-secret"
	s.NoRegistration = true
	s.Clients = map[string]string{"pre": secret}
	st.Set(mcpauth.ClientSecretAccount("https://legit.example", "pre"), secret)
	var opened atomic.Bool
	err := signInWith(t, f.HandlerWith("docs", s.URL(), &mcpauth.Client{Issuer: s.AS.URL, ID: "pre", SecretStored: true}),
		func(context.Context, string) error { opened.Store(true); return nil })
	if err == nil || !strings.Contains(err.Error(), "run `agentd mcp secret docs`") || strings.Contains(err.Error(), secret) || opened.Load() {
		t.Fatalf("err = %v (browser opened: %v); want the missing secret said", err, opened.Load())
	}
	st.Set(mcpauth.ClientSecretAccount(s.AS.URL+"/", "pre"), secret) // a trailing slash is the same issuer
	if err := signInWith(t, f.HandlerWith("docs", s.URL(), &mcpauth.Client{Issuer: s.AS.URL, ID: "pre", SecretStored: true}), nil); err != nil {
		t.Fatal(err)
	}
}
