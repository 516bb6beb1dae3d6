package mcpauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/mcp/mcpauth/oauthtest"
)

func setup(t *testing.T) (*oauthtest.Server, *mcpauth.Flow, *oauthtest.MemStore) {
	t.Helper()
	s := oauthtest.New()
	t.Cleanup(s.Close)
	st := &oauthtest.MemStore{}
	return s, &mcpauth.Flow{Store: st, CallbackTimeout: 10 * time.Second}, st
}

func signIn(t *testing.T, f *mcpauth.Flow, url string, open mcpauth.Opener) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return f.Handler("docs", url).SignIn(ctx, open, nil)
}

// refused runs a sign-in that must fail saying want, and checks nothing was stored.
func refused(t *testing.T, s *oauthtest.Server, f *mcpauth.Flow, st *oauthtest.MemStore, open mcpauth.Opener, want ...string) {
	t.Helper()
	if open == nil {
		open = oauthtest.Browser
	}
	err := signIn(t, f, s.URL(), open)
	if err == nil {
		t.Fatal("sign-in succeeded; want it refused")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if len(st.M) != 0 {
		t.Errorf("a refused sign-in stored %v", st.M)
	}
}

func TestIssuerMismatchRefused(t *testing.T) {
	s, f, st := setup(t)
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	s.Meta = func(m map[string]any) { m["issuer"] = other.URL }
	refused(t, s, f, st, nil, "metadata issuer", "does not match")
}

func TestResourceMismatchRefused(t *testing.T) {
	s, f, st := setup(t)
	s.PRM = func(m map[string]any) { m["resource"] = "https://other.example/mcp" }
	refused(t, s, f, st, nil, "protected-resource metadata was refused", "other.example")
}

func TestPlainHTTPTokenEndpointRefused(t *testing.T) {
	s, f, st := setup(t)
	s.Meta = func(m map[string]any) { m["token_endpoint"] = "http://auth.example.com/token" }
	refused(t, s, f, st, nil, "token_endpoint", "HTTPS")
}

func TestNoS256Refused(t *testing.T) {
	s, f, st := setup(t)
	s.Meta = func(m map[string]any) { m["code_challenge_methods_supported"] = []string{"plain"} }
	refused(t, s, f, st, nil, "S256")
}

func TestTokenEndpointGarbageRefused(t *testing.T) {
	s, f, st := setup(t)
	s.Token = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token": 12, "token_type": [}`))
	}
	refused(t, s, f, st, nil, "token endpoint's answer was refused")
}

func TestTokenEndpointRedirectRefused(t *testing.T) {
	s, f, st := setup(t)
	var hit atomic.Bool
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit.Store(true) }))
	defer evil.Close()
	s.Token = func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.URL+"/steal", http.StatusTemporaryRedirect)
	}
	refused(t, s, f, st, nil, "token endpoint's answer was refused", "does not follow a redirect")
	if hit.Load() {
		t.Error("the code and verifier were sent on to the redirect's target")
	}
}

func TestStateMismatchRefused(t *testing.T) {
	s, f, st := setup(t)
	s.Redirect = func(q url.Values) { q.Set("state", "forged") }
	refused(t, s, f, st, nil, "state agentd did not send")
}

func TestIssMismatchRefused(t *testing.T) {
	s, f, st := setup(t)
	s.Redirect = func(q url.Values) { q.Set("iss", "https://evil.example") }
	refused(t, s, f, st, nil, `came from issuer "https://evil.example"`)
}

func TestMissingIssRefusedWhenAdvertised(t *testing.T) {
	s, f, st := setup(t)
	s.Redirect = func(q url.Values) { q.Del("iss") }
	refused(t, s, f, st, nil, "carried no issuer")
}

func TestCallbackThatNeverComes(t *testing.T) {
	s, f, st := setup(t)
	f.CallbackTimeout = 300 * time.Millisecond
	began := time.Now()
	refused(t, s, f, st, func(context.Context, string) error { return nil }, "no answer came back from the browser within 300ms")
	if time.Since(began) > 5*time.Second {
		t.Errorf("the time-out took %s", time.Since(began))
	}
}

func TestAuthorizationErrorSaid(t *testing.T) {
	s, f, st := setup(t)
	s.Redirect = func(q url.Values) {
		q.Del("code")
		q.Set("error", "access_denied")
		q.Set("error_description", "the user said no")
	}
	refused(t, s, f, st, nil, "refused the sign-in: access_denied the user said no")
}

// connect is an SDK client session to the protected server, through h.
func connect(t *testing.T, url string, h *mcpauth.Handler) (*sdk.ClientSession, error) {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, OAuthHandler: h, MaxRetries: 1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func whoami(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("whoami: %v", err)
	}
	return res.Content[0].(*sdk.TextContent).Text
}

func TestSignInStoresByIssuerAndResource(t *testing.T) {
	s, f, st := setup(t)
	var opened string
	if err := signIn(t, f, s.URL(), func(ctx context.Context, u string) error { opened = u; return oauthtest.Browser(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	au, _ := url.Parse(opened)
	q := au.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != s.URL() || !strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") {
		t.Errorf("authorization URL %s", opened)
	}
	v, ok := st.M[s.AS.URL+" "+s.URL()]
	if !ok {
		t.Fatalf("nothing stored under issuer and resource: %v", st.M)
	}
	var rec struct {
		Token struct {
			AccessToken string `json:"access_token"`
		} `json:"token"`
	}
	json.Unmarshal([]byte(v), &rec)
	if reg, _ := s.Counts(); reg != 1 {
		t.Errorf("%d registrations; want 1 (dynamic: no client metadata document configured)", reg)
	}
	// A new process (a new Flow on the same store) uses the stored token with nobody asked.
	f2 := &mcpauth.Flow{Store: st}
	h := f2.Handler("docs", s.URL())
	cs, err := connect(t, s.URL(), h)
	if err != nil {
		t.Fatalf("connect with the stored token: %v", err)
	}
	if got := whoami(t, cs); got != "token "+rec.Token.AccessToken {
		t.Errorf("whoami = %q; want the stored token %q", got, rec.Token.AccessToken)
	}
}

// Metadata found at the origin's root names the origin as the resource: that identifier, as
// published, is what the authorization and token requests carry, while the tokens stay filed
// under the server's URL (so signing out of it finds them).
func TestRootMetadataResourceSentAsPublished(t *testing.T) {
	s, f, st := setup(t)
	s.RootPRM = true
	var opened string
	if err := signIn(t, f, s.URL(), func(ctx context.Context, u string) error { opened = u; return oauthtest.Browser(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	au, _ := url.Parse(opened)
	if got := au.Query().Get("resource"); got != s.RS.URL {
		t.Errorf("resource = %q; want %q as the metadata published it", got, s.RS.URL)
	}
	if _, ok := st.M[s.AS.URL+" "+s.URL()]; !ok {
		t.Fatalf("nothing stored under issuer and server URL: %v", st.M)
	}
}

func TestClientIDMetadataDocumentFirst(t *testing.T) {
	s, f, _ := setup(t)
	f.ClientIDURL = "https://agentd.example/oauth/client.json"
	var opened string
	if err := signIn(t, f, s.URL(), func(ctx context.Context, u string) error { opened = u; return oauthtest.Browser(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	if reg, _ := s.Counts(); reg != 0 {
		t.Errorf("%d dynamic registrations; want none when the server takes the document", reg)
	}
	if !strings.Contains(opened, url.QueryEscape(f.ClientIDURL)) {
		t.Errorf("client_id is not the document's URL: %s", opened)
	}
	// Without the server's support: dynamic registration.
	s.Meta = func(m map[string]any) { delete(m, "client_id_metadata_document_supported") }
	if err := signIn(t, f, s.URL(), oauthtest.Browser); err != nil {
		t.Fatal(err)
	}
	if reg, _ := s.Counts(); reg != 1 {
		t.Errorf("%d dynamic registrations; want 1 as the fallback", reg)
	}
}

func TestNoTokenNeedsSignIn(t *testing.T) {
	s, f, _ := setup(t)
	h := f.Handler("docs", s.URL())
	if _, err := connect(t, s.URL(), h); err == nil {
		t.Fatal("connected without a token")
	}
	ns := h.NeedsSignIn()
	if ns == nil || ns.Issuer != s.AS.URL || !strings.Contains(ns.Error(), "agentd mcp login docs") {
		t.Fatalf("NeedsSignIn = %v", ns)
	}
}

// TestRefreshReachesEveryLiveSession: two connections share one token source; when the token
// nears its expiry it is refreshed once, and both send the new one from their next call.
func TestRefreshReachesEveryLiveSession(t *testing.T) {
	s, f, st := setup(t)
	s.ExpiresIn = 3
	f.RefreshEarly = 2 * time.Second // a token is refreshed once it has less than 2 s left
	if err := signIn(t, f, s.URL(), oauthtest.Browser); err != nil {
		t.Fatal(err)
	}
	a, err := connect(t, s.URL(), f.Handler("docs", s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := connect(t, s.URL(), f.Handler("docs", s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	first := whoami(t, a)
	if whoami(t, b) != first {
		t.Fatal("the two sessions hold different tokens")
	}
	time.Sleep(1200 * time.Millisecond)
	second := whoami(t, a)
	if second == first {
		t.Fatalf("the token was not refreshed: %s", second)
	}
	if got := whoami(t, b); got != second {
		t.Errorf("the other live session sends %q; want the refreshed %q", got, second)
	}
	if _, refreshes := s.Counts(); refreshes != 1 {
		t.Errorf("%d refreshes; want one for both sessions", refreshes)
	}
	if !strings.Contains(st.M[s.AS.URL+" "+s.URL()], strings.TrimPrefix(second, "token ")) {
		t.Error("the refreshed token was not stored")
	}
}

// TestRevokedTokenRefreshed: a server that refuses the token held gets a refreshed one, with
// nobody asked.
func TestRevokedTokenRefreshed(t *testing.T) {
	s, f, _ := setup(t)
	if err := signIn(t, f, s.URL(), oauthtest.Browser); err != nil {
		t.Fatal(err)
	}
	cs, err := connect(t, s.URL(), f.Handler("docs", s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	first := whoami(t, cs)
	s.Revoke()
	if got := whoami(t, cs); got == first {
		t.Errorf("still %s after the revocation", got)
	}
}

func TestSignOutForgets(t *testing.T) {
	s, f, st := setup(t)
	if err := signIn(t, f, s.URL(), oauthtest.Browser); err != nil {
		t.Fatal(err)
	}
	h := f.Handler("docs", s.URL())
	cs, err := connect(t, s.URL(), h)
	if err != nil {
		t.Fatal(err)
	}
	whoami(t, cs)
	had, err := f.SignOut(s.URL())
	if err != nil || !had {
		t.Fatalf("SignOut = %v, %v", had, err)
	}
	if len(st.M) != 0 {
		t.Errorf("the store still holds %v", st.M)
	}
	s.Revoke()
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}}); err == nil {
		t.Error("a call after the sign-out succeeded")
	}
	if h.NeedsSignIn() == nil {
		t.Error("after the sign-out the server does not say it needs sign-in")
	}
	if had, _ := f.SignOut(s.URL()); had {
		t.Error("a second sign-out found tokens")
	}
}

func TestServerThatAsksNothing(t *testing.T) {
	open := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer open.Close()
	f := &mcpauth.Flow{Store: &oauthtest.MemStore{}}
	err := signIn(t, f, open.URL+"/mcp", oauthtest.Browser)
	if err == nil || !strings.Contains(err.Error(), "did not ask for sign-in") {
		t.Fatalf("err = %v", err)
	}
}
