// Package oauthtest is a fake OAuth authorization server and an MCP server it protects, started
// by tests (httptest, loopback only): the authorization server approves every request at once and
// redirects to the client's redirect URI, so a test's "browser" is an HTTP GET that follows the
// redirects. Its knobs make it hostile in the ways agentd must refuse.
package oauthtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
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

	mu            sync.Mutex
	codes         map[string]grant
	access        map[string]time.Time // valid access tokens and their expiry
	refresh       map[string]bool
	n             int
	Registrations int
	Refreshes     int
	Seen          []string // the bearer tokens the MCP server was sent, in order
}

type grant struct{ challenge, redirect, client, resource string }

// New starts both servers; Close stops them.
func New() *Server {
	s := &Server{codes: map[string]grant{}, access: map[string]time.Time{}, refresh: map[string]bool{}}
	s.AS = httptest.NewServer(http.HandlerFunc(s.serveAS))
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
			m := map[string]any{"resource": res, "authorization_servers": []string{s.AS.URL}, "scopes_supported": []string{"mcp"}}
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
		exp, ok := s.access[tok]
		s.mu.Unlock()
		if !ok || time.Now().After(exp) {
			if s.RootPRM {
				w.Header().Set("WWW-Authenticate", `Bearer scope="mcp"`)
			} else {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", scope="mcp"`, s.RS.URL))
			}
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	return s
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
}

// Revoke makes every access token invalid (as if they expired).
func (s *Server) Revoke() {
	s.mu.Lock()
	s.access = map[string]time.Time{}
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

func (s *Server) serveAS(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		m := map[string]any{
			"issuer": s.AS.URL, "authorization_endpoint": s.AS.URL + "/authorize", "token_endpoint": s.AS.URL + "/token",
			"registration_endpoint": s.AS.URL + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "authorization_response_iss_parameter_supported": true,
			"scopes_supported": []string{"mcp", "offline_access"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"client_id_metadata_document_supported": true,
		}
		if s.Meta != nil {
			s.Meta(m)
		}
		writeJSON(w, m)
	case "/register":
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
		s.codes[code] = grant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), client: q.Get("client_id"), resource: q.Get("resource")}
		s.mu.Unlock()
		back := url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {s.AS.URL}}
		if s.Redirect != nil {
			s.Redirect(back)
		}
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+back.Encode(), http.StatusFound)
	case "/token":
		if s.Token != nil {
			s.Token(w, r)
			return
		}
		s.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
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
	switch r.Form.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[r.Form.Get("code")]
		delete(s.codes, r.Form.Get("code"))
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.Form.Get("redirect_uri") != g.redirect ||
			r.Form.Get("client_id") != g.client || r.Form.Get("resource") != g.resource {
			fail("invalid_grant")
			return
		}
	case "refresh_token":
		if !s.refresh[r.Form.Get("refresh_token")] {
			fail("invalid_grant")
			return
		}
		delete(s.refresh, r.Form.Get("refresh_token"))
		s.Refreshes++
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
	s.access[at] = time.Now().Add(time.Duration(exp) * time.Second)
	s.refresh[rt] = true
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
