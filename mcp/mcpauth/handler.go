package mcpauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// source is the one token source of an issuer and resource, shared by every connection to the
// resource: a refresh is made once and every live connection sends the new token from its next
// request.
type source struct {
	f    *Flow
	acct string

	mu   sync.Mutex
	rec  *record // nil once signed out
	gone bool
}

var _ oauth2.TokenSource = (*source)(nil)

func (s *source) live() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.gone
}

func (s *source) replace(r *record) {
	s.mu.Lock()
	s.rec, s.gone = r, false
	s.mu.Unlock()
}

func (s *source) forget() {
	s.mu.Lock()
	s.rec, s.gone = nil, true
	s.mu.Unlock()
}

// errSignedOut makes the SDK's transport send the request without a token (it does so for an
// invalid_grant), so the server's 401 brings the handler back, which then says sign-in is needed.
func errSignedOut(why string) error {
	return &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: why}
}

// Token is the current access token, refreshed first when it expires within RefreshEarly.
func (s *source) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return nil, errSignedOut("signed out")
	}
	t := s.rec.Token
	if t.AccessToken != "" && (t.Expiry.IsZero() || time.Until(t.Expiry) > s.f.refreshEarly()) {
		c := *t
		return &c, nil
	}
	return s.refreshLocked(context.Background())
}

// issuer is the authorization server of the token.
func (s *source) issuer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return ""
	}
	return s.rec.Issuer
}

// scopes are those the token was asked with.
func (s *source) scopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return nil
	}
	return slices.Clone(s.rec.Scopes)
}

// current is the access token now held, without a refresh.
func (s *source) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return ""
	}
	return s.rec.Token.AccessToken
}

// refresh gets a new access token now (the server refused the one held).
func (s *source) refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return errSignedOut("signed out")
	}
	_, err := s.refreshLocked(ctx)
	return err
}

func (s *source) refreshLocked(ctx context.Context) (*oauth2.Token, error) {
	// Another agentd may have signed in again (agentd mcp login) or out since this one read
	// the store.
	stored, err := s.f.load(s.acct)
	if err == nil && stored == nil {
		s.rec, s.gone = nil, true
		return nil, errSignedOut("signed out")
	}
	if stored != nil && stored.Token.AccessToken != s.rec.Token.AccessToken &&
		(stored.Token.Expiry.IsZero() || time.Until(stored.Token.Expiry) > s.f.refreshEarly()) {
		s.rec = stored
		c := *stored.Token
		return &c, nil
	}
	rt := s.rec.Token.RefreshToken
	if rt == "" {
		return nil, errSignedOut("the token expired and the authorization server gave no refresh token")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, s.f.client())
	tok, err := s.rec.config().TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
	if err != nil {
		return nil, fmt.Errorf("refreshing the token at %s failed: %w", s.rec.TokenURL, err)
	}
	if err := checkToken(tok); err != nil {
		return nil, err
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = rt
	}
	r := *s.rec
	r.Token = tok
	s.rec = &r
	if err := s.f.save(&r); err != nil {
		s.f.log().Warn("MCP token refreshed but not stored")
	}
	return tok, nil
}

// Handler is one server's side of the flow: the SDK's Streamable HTTP transport asks it for the
// token of each request and calls Authorize on a 401 (or a 403 for more scope).
type Handler struct {
	f        *Flow
	name     string
	resource string
	client   *Client // registered beforehand, nil for none

	mu    sync.Mutex
	src   *source
	needs *NeedsSignIn // the last Authorize found no token and no one to ask
	// wanted are the scopes a step-up asked for: every later sign-in of this handler asks for
	// them too.
	wanted []string
}

var _ auth.OAuthHandler = (*Handler)(nil)

// Handler returns the handler of server name at resource (its URL).
func (f *Flow) Handler(name, resource string) *Handler {
	return f.HandlerWith(name, resource, nil)
}

// HandlerWith is Handler with a client registered beforehand (nil for none), which then takes
// precedence over a Client ID Metadata Document and dynamic registration.
func (f *Flow) HandlerWith(name, resource string, c *Client) *Handler {
	return &Handler{f: f, name: name, resource: resource, client: c}
}

// TokenSource is the shared source once known, else nil (the request goes without a token).
func (h *Handler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.src == nil {
		return nil, nil
	}
	return h.src, nil
}

// NeedsSignIn is the reason the server's last start could not authorize, or nil.
func (h *Handler) NeedsSignIn() *NeedsSignIn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.needs
}

func (h *Handler) attach(s *source) {
	h.mu.Lock()
	h.src, h.needs = s, nil
	h.mu.Unlock()
}

// Authorize answers a 401: with the stored token of the server's issuer and resource when there
// is one (refreshed when the server refused the one sent), else with a *NeedsSignIn error: a
// server's start asks nobody; SignIn does. It answers a 403 insufficient_scope (step-up) with a
// newer token when there is one, else with a *NeedsSignIn whose sign-in asks for the scopes held
// and those the server named; a 403 asking only for scopes the token was already asked with is
// refused, so a server that keeps refusing cannot make agentd sign in again and again.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	return h.authorize(ctx, req, resp, nil)
}

func (h *Handler) authorize(ctx context.Context, req *http.Request, resp *http.Response, open Opener) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	chal, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("MCP server %s sent a malformed WWW-Authenticate header: %v", h.name, err)
	}
	stepUp := resp.StatusCode == http.StatusForbidden
	if stepUp && challengeParam(chal, "error") != "insufficient_scope" {
		return fmt.Errorf("MCP server %s refused the request (HTTP 403)", h.name)
	}
	d, err := h.f.discover(ctx, h.name, h.resource, chal)
	if err != nil {
		return err
	}
	if h.client != nil && !h.client.at(d.issuer) {
		h.detach(nil)
		return misplacedClient(h.name, d.issuer, h.client)
	}
	sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	h.mu.Lock()
	held, wanted := h.src, h.wanted
	h.mu.Unlock()
	if held != nil && held.issuer() != d.issuer {
		// The resource moved to another authorization server: the old one's token is not sent
		// again, and its client is not presented to the new one (the sign-in registers anew).
		h.detach(&NeedsSignIn{Server: h.name, Issuer: d.issuer, Was: held.issuer()})
		held = nil
		stepUp = false
	}
	if stepUp {
		if len(d.challenged) == 0 {
			return fmt.Errorf("MCP server %s refused the request for want of scope (HTTP 403 insufficient_scope) without saying which", h.name)
		}
		var had []string
		if held != nil {
			if cur := held.current(); cur != "" && cur != sent {
				return nil // a newer token (another connection's sign-in): the request is retried with it
			}
			had = held.scopes()
		}
		if len(had) > 0 && len(union(had, d.challenged)) == len(had) {
			return fmt.Errorf("MCP server %s refused the request for want of scope %s, which its token was already asked with; agentd does not sign in again for it",
				h.name, strings.Join(d.challenged, " "))
		}
		all := union(union(had, wanted), d.challenged)
		if len(all) > maxScopes {
			return fmt.Errorf("MCP server %s asks for more than %d scopes: refused", h.name, maxScopes)
		}
		wanted = union(wanted, all)
		h.mu.Lock()
		h.wanted = wanted
		h.mu.Unlock()
		if open == nil {
			ns := &NeedsSignIn{Server: h.name, Issuer: d.issuer, Scopes: all}
			h.mu.Lock()
			h.needs = ns // the token held still serves what it was granted for
			h.mu.Unlock()
			return ns
		}
	}
	acct := account(d.issuer, d.resource)
	if open == nil {
		src, err := h.f.lookup(acct)
		if err != nil {
			return fmt.Errorf("MCP server %s: reading its stored token failed: %v", h.name, err)
		}
		if src != nil {
			if sent == "" || sent != src.current() {
				h.attach(src)
				return nil
			}
			if src.refresh(ctx) == nil {
				h.attach(src)
				return nil
			}
		}
		h.mu.Lock()
		ns := h.needs
		if ns == nil || ns.Issuer != d.issuer || ns.Scopes != nil {
			ns = &NeedsSignIn{Server: h.name, Issuer: d.issuer}
		}
		h.src, h.needs = nil, ns
		h.mu.Unlock()
		return ns
	}
	d.ask(h.client, wanted)
	r, err := h.f.signIn(ctx, h.name, d, h.client, open)
	if err != nil {
		return err
	}
	h.attach(h.f.install(r))
	return nil
}

// detach drops the token held (nil: no sign-in is pending either).
func (h *Handler) detach(ns *NeedsSignIn) {
	h.mu.Lock()
	h.src, h.needs = nil, ns
	h.mu.Unlock()
}

// SignIn runs the sign-in with the user through open: it asks the server without a token, and
// on its 401 discovers, registers, opens the authorization URL and waits for the callback. A
// server that does not ask for authorization is said to.
func (h *Handler) SignIn(ctx context.Context, open Opener, hc *http.Client) error {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.resource, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second, CheckRedirect: checkRedirect}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("MCP server %s: %v", h.name, err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		resp.Body.Close()
		return fmt.Errorf("MCP server %s did not ask for sign-in (it answered HTTP %d without a token)", h.name, resp.StatusCode)
	}
	return h.authorize(ctx, req, resp, open)
}

// IsNeedsSignIn reports whether err says a server needs the user to sign in.
func IsNeedsSignIn(err error) bool {
	var ns *NeedsSignIn
	return errors.As(err, &ns)
}
