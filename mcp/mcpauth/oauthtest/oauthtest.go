// Package oauthtest is a fake OAuth authorization server and an MCP server it protects, started
// by tests (httptest, loopback only): the authorization server approves every request at once and
// redirects to the client's redirect URI, so a test's "browser" is an HTTP GET that follows the
// redirects. Its knobs make it hostile in the ways agentd must refuse.
package oauthtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is the pair: AS (the authorization server) and RS (the MCP server at RS.URL+"/mcp").
type Server struct {
	AS, RS *httptest.Server

	// Knobs, set before the flow runs.
	ExpiresIn int // seconds of an access token; 3600 when 0
	// Meta changes the authorization server's metadata before it is served.
	Meta func(m map[string]any)
	// PRM changes the protected-resource metadata before it is served.
	PRM func(m map[string]any)
	// Redirect changes the callback query the authorization endpoint redirects with.
	Redirect func(q url.Values)
	// RootPRM serves the protected-resource metadata only at the origin's root, naming the
	// origin (pathless) as its resource, and the 401 challenge points nowhere.
	RootPRM bool
	// Token, when set, answers the token endpoint instead.
	Token http.HandlerFunc
	// CallScope, when set, is the scope a tools/call needs: a token granted without it is
	// answered 403 insufficient_scope naming it (step-up authorization).
	CallScope string
	// Clients are clients registered beforehand (ID to secret): a token request of one must
	// authenticate with HTTP Basic.
	Clients map[string]string
	// Grant, when set, says which of the scopes asked for a token is granted (all of them
	// otherwise).
	Grant func(asked []string) []string
	// NoRegistration takes dynamic registration away (no registration_endpoint, /register 404).
	NoRegistration bool

	// AS2 is the authorization server the resource moved to (Migrate), nil before.
	AS2 *httptest.Server

	mu            sync.Mutex
	codes         map[string]grant
	access        map[string]issued // valid access tokens
	refresh       map[string]issued // valid refresh tokens (no expiry)
	registered    map[string]string // dynamically registered client IDs and their issuer
	n             int
	Registrations int
	Refreshes     int
	Seen          []string // the bearer tokens the MCP server was sent, in order
	// Requests are the authorization server requests, "ISSUER PATH client=ID scope=S basic=B refresh=R".
	Requests []string
	// Misdirected counts requests at one authorization server carrying another's client ID or
	// refresh token.
	Misdirected int
}

type grant struct{ challenge, redirect, client, resource, scope, issuer string }

type issued struct {
	expiry time.Time
	scopes []string
	issuer string
}

// New starts both servers; Close stops them.
func New() *Server {
	s := &Server{codes: map[string]grant{}, access: map[string]issued{}, refresh: map[string]issued{}, registered: map[string]string{}}
	s.AS = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveAS(s.AS.URL, w, r) }))
	mcpSrv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	mcpSrv.AddTool(&sdk.Tool{Name: "whoami", Description: "says the token it was called with", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			tok := strings.TrimPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "token " + tok}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpSrv }, nil)
	s.RS = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (!s.RootPRM && r.URL.Path == "/.well-known/oauth-protected-resource/mcp") || (s.RootPRM && r.URL.Path == "/.well-known/oauth-protected-resource") {
			res := s.RS.URL + "/mcp"
			if s.RootPRM {
				res = s.RS.URL
			}
			m := map[string]any{"resource": res, "authorization_servers": []string{s.issuer()}, "scopes_supported": []string{"mcp"}}
			if s.PRM != nil {
				s.PRM(m)
			}
			writeJSON(w, m)
			return
		}
		if r.URL.Path != "/mcp" {
			http.NotFound(w, r)
			return
		}
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		if tok != "" {
			s.Seen = append(s.Seen, tok)
		}
		is, ok := s.access[tok]
		need := s.CallScope
		s.mu.Unlock()
		if !ok || time.Now().After(is.expiry) || is.issuer != s.issuer() {
			if s.RootPRM {
				w.Header().Set("WWW-Authenticate", `Bearer scope="mcp"`)
			} else {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", scope="mcp"`, s.RS.URL))
			}
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if need != "" && !slices.Contains(is.scopes, need) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &msg)
			if msg.Method == "tools/call" {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, need, s.RS.URL))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	return s
}

// issuer is the authorization server the resource's metadata names now.
func (s *Server) issuer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.AS2 != nil {
		return s.AS2.URL
	}
	return s.AS.URL
}

// NeedScope sets CallScope while the servers run.
func (s *Server) NeedScope(scope string) {
	s.mu.Lock()
	s.CallScope = scope
	s.mu.Unlock()
}

// Migrate moves the resource to a second authorization server: its metadata names AS2 from now
// on, and the tokens of the first are refused (401).
func (s *Server) Migrate() {
	as2 := httptest.NewUnstartedServer(nil)
	as2.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveAS(as2.URL, w, r) })
	as2.Start()
	s.mu.Lock()
	s.AS2 = as2
	s.mu.Unlock()
}

// MisdirectedCount is Misdirected.
func (s *Server) MisdirectedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Misdirected
}

// AuthRequests are the Requests made at the authorization server of issuer.
func (s *Server) AuthRequests(issuer string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.Requests {
		if strings.HasPrefix(r, issuer+" ") {
			out = append(out, r)
		}
	}
	return out
}

// URL is the MCP server's endpoint.
func (s *Server) URL() string { return s.RS.URL + "/mcp" }

// Close stops both servers.
func (s *Server) Close() {
	// A client's event stream stays open; close the connections before waiting for handlers.
	s.RS.CloseClientConnections()
	s.AS.CloseClientConnections()
	s.RS.Close()
	s.AS.Close()
	if s.AS2 != nil {
		s.AS2.CloseClientConnections()
		s.AS2.Close()
	}
}

// Revoke makes every access token invalid (as if they expired).
func (s *Server) Revoke() {
	s.mu.Lock()
	s.access = map[string]issued{}
	s.mu.Unlock()
}

// SeenTokens is a copy of Seen.
func (s *Server) SeenTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.Seen...)
}

// Counts are the registrations and refreshes made.
func (s *Server) Counts() (registrations, refreshes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Registrations, s.Refreshes
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serveAS(base string, w http.ResponseWriter, r *http.Request) {
	s.note(base, r)
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		m := map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "authorization_response_iss_parameter_supported": true,
			"scopes_supported": []string{"mcp", "offline_access"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"client_id_metadata_document_supported": true,
		}
		if s.NoRegistration {
			delete(m, "registration_endpoint")
		}
		if s.Meta != nil {
			s.Meta(m)
		}
		writeJSON(w, m)
	case "/register":
		if s.NoRegistration {
			http.NotFound(w, r)
			return
		}
		var meta struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&meta) != nil || len(meta.RedirectURIs) == 0 {
			http.Error(w, `{"error":"invalid_client_metadata"}`, http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.Registrations++
		s.n++
		id := fmt.Sprintf("client-%d", s.n)
		s.registered[id] = base
		s.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": "none"})
	case "/authorize":
		q := r.URL.Query()
		if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.n++
		code := fmt.Sprintf("code-%d", s.n)
		s.codes[code] = grant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), client: q.Get("client_id"), resource: q.Get("resource"),
			scope: q.Get("scope"), issuer: base}
		s.mu.Unlock()
		back := url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {base}}
		if s.Redirect != nil {
			s.Redirect(back)
		}
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+back.Encode(), http.StatusFound)
	case "/token":
		if s.Token != nil {
			s.Token(w, r)
			return
		}
		s.token(base, w, r)
	default:
		http.NotFound(w, r)
	}
}

// note records a request at the authorization server of base, and counts it as misdirected
// when it carries a client ID or refresh token of another.
func (s *Server) note(base string, r *http.Request) {
	_ = r.ParseForm()
	client := r.Form.Get("client_id")
	id, _, basic := r.BasicAuth()
	if basic {
		client = id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if iss, ok := s.registered[client]; ok && iss != base {
		s.Misdirected++
	}
	if rt, ok := s.refresh[r.Form.Get("refresh_token")]; ok && rt.issuer != base {
		s.Misdirected++
	}
	s.Requests = append(s.Requests, fmt.Sprintf("%s %s client=%s scope=%s basic=%v refresh=%v", base, r.URL.Path, client, r.Form.Get("scope"), basic, r.Form.Get("refresh_token") != ""))
}

func (s *Server) token(base string, w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		return
	}
	fail := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":%q}`, code)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	client := r.Form.Get("client_id")
	if id, secret, ok := r.BasicAuth(); ok {
		client = id
		if want, known := s.Clients[id]; !known || want != secret {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
	} else if _, known := s.Clients[client]; known {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"invalid_client"}`)
		return
	}
	var scope string
	switch r.Form.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[r.Form.Get("code")]
		delete(s.codes, r.Form.Get("code"))
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.Form.Get("redirect_uri") != g.redirect ||
			client != g.client || r.Form.Get("resource") != g.resource || g.issuer != base {
			fail("invalid_grant")
			return
		}
		scope = g.scope
		if s.Grant != nil {
			scope = strings.Join(s.Grant(strings.Fields(scope)), " ")
		}
	case "refresh_token":
		rt, ok := s.refresh[r.Form.Get("refresh_token")]
		if !ok || rt.issuer != base {
			fail("invalid_grant")
			return
		}
		delete(s.refresh, r.Form.Get("refresh_token"))
		s.Refreshes++
		scope = strings.Join(rt.scopes, " ")
	default:
		fail("unsupported_grant_type")
		return
	}
	exp := s.ExpiresIn
	if exp == 0 {
		exp = 3600
	}
	s.n++
	at, rt := fmt.Sprintf("access-%d", s.n), fmt.Sprintf("refresh-%d", s.n)
	s.access[at] = issued{expiry: time.Now().Add(time.Duration(exp) * time.Second), scopes: strings.Fields(scope), issuer: base}
	s.refresh[rt] = issued{scopes: strings.Fields(scope), issuer: base}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": exp, "refresh_token": rt})
}

// Browser is an Opener that plays the user's browser: it follows the authorization URL's
// redirects to the loopback listener.
func Browser(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// MemStore is a Store in memory.
type MemStore = mcpauth.MemoryStore
