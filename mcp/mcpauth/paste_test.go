package mcpauth_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/mcp/mcpauth/oauthtest"
)

// remoteSignIn starts h's sign-in with a browser on another machine: the authorization server
// is asked, but its redirect to agentd's loopback listener never arrives. It returns the address
// that browser ended on and the sign-in's result, to come.
func remoteSignIn(t *testing.T, h *mcpauth.Handler) (address string, result <-chan error) {
	t.Helper()
	addr := make(chan string, 1)
	res := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	go func() {
		res <- h.SignIn(ctx, func(ctx context.Context, u string) error {
			a, err := oauthtest.EndsAt(ctx, u)
			addr <- a
			return err
		}, nil)
	}()
	select {
	case a := <-addr:
		if !strings.Contains(a, mcpauth.CallbackPath+"?") {
			t.Fatalf("the browser ended on %q", a)
		}
		return a, res
	case err := <-res:
		t.Fatalf("the sign-in ended before the browser was opened: %v", err)
	case <-ctx.Done():
		t.Fatal("the authorization URL was never opened")
	}
	return "", nil
}

func complete(t *testing.T, h *mcpauth.Handler, address string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return h.Complete(ctx, address)
}

func wantErr(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: accepted; want it refused", what)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", what, err, w)
		}
	}
}

func withQuery(t *testing.T, address, key, value string) string {
	t.Helper()
	u, err := url.Parse(address)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if value == "" {
		q.Del(key)
	} else {
		q.Set(key, value)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// TestPastedAddressSignsIn: the address the remote browser ended on, pasted, signs the server
// in as the loopback callback would; pasting it again is refused (an address is used once).
func TestPastedAddressSignsIn(t *testing.T) {
	s, f, st := setup(t)
	h := f.Handler("docs", s.URL())
	address, result := remoteSignIn(t, h)
	if err := complete(t, h, "  "+address+"\n"); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if err := <-result; err != nil {
		t.Fatalf("SignIn: %v", err)
	}
	if _, ok := st.M[s.AS.URL+" "+s.URL()]; !ok {
		t.Fatalf("nothing stored: %v", st.M)
	}
	if !h.SignedIn() {
		t.Error("the handler does not say it is signed in")
	}
	wantErr(t, "the same address again", complete(t, h, address), "no sign-in of it is waiting", "already used")
	// A new sign-in does not take the old address either: its state is the old sign-in's.
	address2, result2 := remoteSignIn(t, h)
	wantErr(t, "the first sign-in's address in the second", complete(t, h, address), "state agentd did not send", "still waiting")
	if err := complete(t, h, address2); err != nil {
		t.Fatalf("the second sign-in's own address: %v", err)
	}
	if err := <-result2; err != nil {
		t.Fatal(err)
	}
}

// TestPastedAddressRefusals: an address that is not this sign-in's answer is refused, saying
// why, and the sign-in goes on waiting; the right one then signs in.
func TestPastedAddressRefusals(t *testing.T) {
	s, f, st := setup(t)
	h := f.Handler("docs", s.URL())
	address, result := remoteSignIn(t, h)
	u, _ := url.Parse(address)
	other := *u
	other.Path = "/somewhere/else"
	otherPort := *u
	otherPort.Host = "127.0.0.1:1"
	for _, c := range []struct{ what, address, want string }{
		{"not a URL", "the code is 1234", "not the address your browser ended on"},
		{"a bare query", u.RawQuery, "not the address your browser ended on"},
		{"a javascript URL", "javascript:alert(1)//?" + u.RawQuery, "not the address your browser ended on"},
		{"no state", withQuery(t, address, "state", ""), "carries no state"},
		{"a forged state", withQuery(t, address, "state", "forged"), "state agentd did not send"},
		{"another path", other.String(), "does not go to agentd's callback"},
		{"another listener", otherPort.String(), "does not go to agentd's callback"},
		{"too long", address + "&pad=" + strings.Repeat("x", 9000), "far shorter"},
	} {
		wantErr(t, c.what, complete(t, h, c.address), c.want)
	}
	select {
	case err := <-result:
		t.Fatalf("a refused paste ended the sign-in: %v", err)
	default:
	}
	if len(st.M) != 0 {
		t.Fatalf("a refused paste stored %v", st.M)
	}
	if err := complete(t, h, address); err != nil {
		t.Fatalf("the right address after the refusals: %v", err)
	}
	if err := <-result; err != nil {
		t.Fatal(err)
	}
}

// TestPastedAddressOfAnotherIssuerRefused: the right state but an issuer that is not the
// server's authorization server (RFC 9207 mix-up) is refused, as at the loopback listener, and
// ends the sign-in: nothing is stored.
func TestPastedAddressOfAnotherIssuerRefused(t *testing.T) {
	s, f, st := setup(t)
	s.Redirect = func(q url.Values) { q.Set("iss", "https://evil.example") }
	h := f.Handler("docs", s.URL())
	address, result := remoteSignIn(t, h)
	wantErr(t, "another issuer", complete(t, h, address), `came from issuer "https://evil.example"`, "refused")
	wantErr(t, "the sign-in", <-result, `came from issuer "https://evil.example"`)
	if len(st.M) != 0 {
		t.Errorf("stored %v", st.M)
	}
	if h.SignedIn() {
		t.Error("signed in after a mix-up")
	}
	// Without an issuer, where the server promised one: refused too.
	s.Redirect = func(q url.Values) { q.Del("iss") }
	address, result = remoteSignIn(t, h)
	wantErr(t, "no issuer", complete(t, h, address), "carried no issuer")
	<-result
	if len(st.M) != 0 {
		t.Errorf("stored %v", st.M)
	}
}

// TestPastedAddressOfAnotherServerRefused: with two sign-ins waiting, the answer to one pasted
// into the other is refused, naming the server it belongs to, and neither is spent by it.
func TestPastedAddressOfAnotherServerRefused(t *testing.T) {
	s, f, st := setup(t)
	s2 := oauthtest.New()
	t.Cleanup(s2.Close)
	docs, wiki := f.Handler("docs", s.URL()), f.Handler("wiki", s2.URL())
	docsAddr, docsRes := remoteSignIn(t, docs)
	wikiAddr, wikiRes := remoteSignIn(t, wiki)
	wantErr(t, "wiki's answer to docs", complete(t, docs, wikiAddr), "the sign-in of MCP server wiki, not this one")
	wantErr(t, "docs's answer to wiki", complete(t, wiki, docsAddr), "the sign-in of MCP server docs, not this one")
	if len(st.M) != 0 {
		t.Fatalf("stored %v", st.M)
	}
	// A server with no sign-in waiting is told whose answer it is, and that too spends nothing.
	idle := f.Handler("idle", s.URL()+"/idle")
	wantErr(t, "docs's answer to a server not signing in", complete(t, idle, docsAddr), "the sign-in of MCP server docs, not this one")
	if err := complete(t, docs, docsAddr); err != nil {
		t.Fatal(err)
	}
	if err := complete(t, wiki, wikiAddr); err != nil {
		t.Fatal(err)
	}
	if err := <-docsRes; err != nil {
		t.Fatal(err)
	}
	if err := <-wikiRes; err != nil {
		t.Fatal(err)
	}
}

// TestPastedAddressAfterTheBrowserCame: when the loopback callback already arrived, a paste of
// the same answer is refused and the code is not exchanged twice.
func TestPastedAddressAfterTheBrowserCame(t *testing.T) {
	s, f, _ := setup(t)
	h := f.Handler("docs", s.URL())
	var address string
	err := signIn(t, f, s.URL(), func(ctx context.Context, u string) error {
		a, err := oauthtest.EndsAt(ctx, u)
		address = a
		if err != nil {
			return err
		}
		return oauthtest.Browser(ctx, a) // the browser was on agentd's machine after all
	})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "a paste after the browser came", complete(t, h, address), "no sign-in of it is waiting")
}

// TestPastedErrorSaid: an address carrying the authorization server's error ends the sign-in
// with it.
func TestPastedErrorSaid(t *testing.T) {
	s, f, st := setup(t)
	s.Redirect = func(q url.Values) {
		q.Del("code")
		q.Set("error", "access_denied")
	}
	h := f.Handler("docs", s.URL())
	address, result := remoteSignIn(t, h)
	wantErr(t, "an error answer", complete(t, h, address), "refused the sign-in: access_denied")
	wantErr(t, "the sign-in", <-result, "access_denied")
	if len(st.M) != 0 {
		t.Errorf("stored %v", st.M)
	}
}

// TestPastedAddressAfterTheTimeOut: once the sign-in gave up waiting, its address is refused.
func TestPastedAddressAfterTheTimeOut(t *testing.T) {
	s, f, st := setup(t)
	f.CallbackTimeout = 200 * time.Millisecond
	h := f.Handler("docs", s.URL())
	address, result := remoteSignIn(t, h)
	wantErr(t, "the sign-in", <-result, "no answer came back from the browser")
	wantErr(t, "a paste after the time-out", complete(t, h, address), "no sign-in of it is waiting")
	if len(st.M) != 0 {
		t.Errorf("stored %v", st.M)
	}
}
