package mcpauth

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"go.uber.org/zap"
	"golang.org/x/oauth2"
)

// Store keeps secrets by an account name (providers/keys.Named: the OS keyring, else a file of
// mode 0600).
type Store interface {
	Get(account string) (string, bool, error)
	Set(account, value string) error
	Delete(account string) error
}

// MemoryStore is a Store in memory, gone with the process (`agentd mcp probe`, tests).
type MemoryStore struct {
	mu sync.Mutex
	M  map[string]string
}

func (m *MemoryStore) Get(account string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.M[account]
	return v, ok, nil
}

func (m *MemoryStore) Set(account, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.M == nil {
		m.M = map[string]string{}
	}
	m.M[account] = value
	return nil
}

func (m *MemoryStore) Delete(account string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.M, account)
	return nil
}

// Opener shows the user the authorization URL: the editor opens it (window/showDocument,
// external), the ACP door posts it in the session, `agentd mcp login` prints it.
type Opener func(ctx context.Context, url string) error

// Defaults of a Flow.
const (
	DefaultCallbackTimeout = 5 * time.Minute
	DefaultRefreshEarly    = 60 * time.Second
	// CallbackPath is the loopback listener's path.
	CallbackPath = "/oauth/callback"
)

// Flow is the process's OAuth state: the store, the shared token sources, the settings.
type Flow struct {
	Store Store
	// ClientIDURL is agentd's Client ID Metadata Document (an https URL); "" registers
	// dynamically only.
	ClientIDURL string
	// CallbackTimeout bounds the wait for the browser's callback.
	CallbackTimeout time.Duration
	// RefreshEarly is how long before its expiry a token is refreshed.
	RefreshEarly time.Duration
	Log          *zap.Logger

	mu      sync.Mutex
	sources map[string]*source  // by account
	waiting map[string]*pending // the sign-ins waiting for their callback, by state (paste.go)
}

func (f *Flow) callbackTimeout() time.Duration {
	if f.CallbackTimeout > 0 {
		return f.CallbackTimeout
	}
	return DefaultCallbackTimeout
}

func (f *Flow) refreshEarly() time.Duration {
	if f.RefreshEarly > 0 {
		return f.RefreshEarly
	}
	return DefaultRefreshEarly
}

func (f *Flow) log() *zap.Logger {
	if f.Log == nil {
		return zap.NewNop()
	}
	return f.Log
}

// client is the HTTP client of the flow's own requests (metadata, registration, token). Its
// Transport is left nil so oauthex's discovery dials with its checks against private networks.
// A redirect to another origin is refused, and so is any redirect of a POST (a token or
// registration request): the code, the verifier and the refresh token go to the endpoint the
// metadata named, nowhere else.
func (f *Flow) client() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, CheckRedirect: checkRedirect}
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	if first.Method != http.MethodGet && first.Method != http.MethodHead {
		return fmt.Errorf("%s redirected to %s; agentd does not follow a redirect of a token or registration request", first.URL.Redacted(), req.URL.Redacted())
	}
	if originOf(req.URL) != originOf(first.URL) {
		return fmt.Errorf("%s redirected to another origin (%s); refused", first.URL.Redacted(), originOf(req.URL))
	}
	if len(via) >= 5 {
		return errors.New("too many redirects")
	}
	return nil
}

// originOf is scheme://host:port, the port spelled out, lower case.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme + "://" + net.JoinHostPort(u.Hostname(), port))
}

// NeedsSignIn is the error of a server that asked for authorization when no one can be asked
// (a server's start, a call): the user signs in with the client's "Sign in" action or `agentd mcp
// login`.
type NeedsSignIn struct {
	Server, Issuer string
	// Scopes, for a step-up, are the scopes the next sign-in asks for: those of the token held
	// and those the server's 403 asked for.
	Scopes []string
	// Was is the authorization server the tokens held are of, when the server's metadata now
	// names another (Issuer).
	Was string
}

func (e *NeedsSignIn) Error() string {
	why := ""
	switch {
	case e.Was != "":
		why = fmt.Sprintf("its authorization server is now %s (it was %s), so ", e.Issuer, e.Was)
	case len(e.Scopes) > 0:
		why = fmt.Sprintf("it asks for more access (scope %s), so ", strings.Join(e.Scopes, " "))
	}
	return fmt.Sprintf("%sit needs you to sign in (at %s): use Sign in, or run `agentd mcp login %s`", why, e.Issuer, e.Server)
}

// Client is a client registered beforehand with an authorization server (a server's settings:
// oauth {clientId, clientSecret or clientSecretEnv, issuer, scopes, callbackPort}). It is used
// instead of a Client ID Metadata Document or dynamic registration, and only at its issuer: a
// server whose metadata names another authorization server is refused, so its ID and secret go
// nowhere else.
type Client struct {
	// Issuer is the authorization server the client is registered with, as its metadata's
	// issuer says (a trailing slash aside).
	Issuer string
	// ID is the client ID; "" leaves the registration to a metadata document or dynamic
	// registration (the other fields still apply).
	ID string
	// Secret is the client secret; "" for a public client.
	Secret string
	// SecretStored says the secret is kept in the Flow's Store, under ClientSecretAccount of
	// the issuer and ID (`agentd mcp secret NAME`), and read there at the sign-in.
	SecretStored bool
	// Scopes are asked for instead of the server's scopes_supported (a challenge's scope is
	// still added).
	Scopes []string
	// CallbackPort is the loopback listener's port (the redirect URI registered with the
	// client); 0 picks a free one.
	CallbackPort int
}

// String never shows the secret.
func (c *Client) String() string {
	return fmt.Sprintf("client %s at %s", c.ID, c.Issuer)
}

// ClientSecretAccount is where the Store keeps a pre-registered client's secret: by issuer and
// client ID, so an entry that names another issuer finds nothing there.
func ClientSecretAccount(issuer, clientID string) string {
	return "client-secret " + strings.TrimSuffix(issuer, "/") + " " + clientID
}

// secret is the client's secret, read from the store when it is kept there.
func (f *Flow) secret(name string, c *Client) (string, error) {
	if !c.SecretStored {
		return c.Secret, nil
	}
	v, ok, err := f.Store.Get(ClientSecretAccount(c.Issuer, c.ID))
	if err != nil {
		return "", fmt.Errorf("MCP server %s: reading its client secret failed: %v", name, err)
	}
	if !ok || v == "" {
		return "", fmt.Errorf("MCP server %s: its oauth.clientSecretKeyring says agentd keeps the client secret, but none is kept for client %s at %s: run `agentd mcp secret %s`", name, c.ID, c.Issuer, name)
	}
	return v, nil
}

// at reports whether the client may be used at issuer: it is registered there, or it has no
// ID (only scopes or a callback port, for whichever registration the server takes).
func (c *Client) at(issuer string) bool {
	return c.ID == "" || strings.TrimSuffix(c.Issuer, "/") == strings.TrimSuffix(issuer, "/")
}

// maxScopes bounds what a step-up may ask for: a server cannot grow the request without end.
const maxScopes = 32

// scopeToken reports whether s is a scope-token of RFC 6749 (3.3): printable ASCII but space,
// '"' and '\', at most 256 bytes. A server's scope reaches the user's notice and the
// authorization URL, so nothing else is taken.
func scopeToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// union is a's scopes then those of b not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// discovery is what the metadata says about one server.
type discovery struct {
	resource string // the server's URL: the tokens are filed under it
	// indicator is the resource parameter of the authorization and token requests (RFC 8707):
	// the protected-resource metadata's resource exactly as published (the origin, for metadata
	// at the root), else the server's URL.
	indicator string
	issuer    string
	asm       *oauthex.AuthServerMeta
	// challenged are the scopes of the challenge, supported the resource metadata's
	// scopes_supported; scopes is what a sign-in asks for.
	challenged, supported, scopes []string
}

func account(issuer, resource string) string { return issuer + " " + resource }

// indexAccount files the issuers a resource has tokens of, so a sign-out needs no network.
func indexAccount(resource string) string { return "resource " + resource }

// discover reads the protected-resource metadata the challenge (or the well-known location)
// points to, then its authorization server's metadata. Metadata that is there but wrong is
// refused, never skipped: a resource that is not this server, an authorization server whose
// metadata names another issuer, endpoints that are not https (or loopback), no S256.
func (f *Flow) discover(ctx context.Context, name, resource string, chal []oauthex.Challenge) (*discovery, error) {
	hc := f.client()
	var prm *oauthex.ProtectedResourceMetadata
	if u := challengeParam(chal, "resource_metadata"); u != "" {
		p, err := oauthex.GetProtectedResourceMetadata(ctx, u, resource, hc)
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: its protected-resource metadata was refused: %v", name, err)
		}
		prm = p
	} else {
		for _, c := range wellKnown(resource) {
			p, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, hc)
			if err != nil {
				// oauthex's error types are not exported: a 4xx is "bad status 4xx", which
				// means the document is not there (try the next place); anything else is a
				// document that is there and wrong.
				if strings.Contains(err.Error(), "bad status 4") {
					continue
				}
				return nil, fmt.Errorf("MCP server %s: its protected-resource metadata was refused: %v", name, err)
			}
			prm = p
			break
		}
	}
	issuer := ""
	var supported []string
	if prm != nil {
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("MCP server %s: its protected-resource metadata names no authorization server", name)
		}
		issuer, supported = prm.AuthorizationServers[0], prm.ScopesSupported
	} else {
		// A server of the 2025-03-26 revision, without resource metadata: it is its own
		// authorization server.
		u, _ := url.Parse(resource)
		issuer = u.Scheme + "://" + u.Host
	}
	challenged := strings.Fields(challengeParam(chal, "scope"))
	if len(challenged) > maxScopes || len(supported) > maxScopes {
		return nil, fmt.Errorf("MCP server %s asks for more than %d scopes: refused", name, maxScopes)
	}
	for _, sc := range slices.Concat(challenged, supported) {
		if !scopeToken(sc) {
			return nil, fmt.Errorf("MCP server %s names a scope that is not an OAuth scope token (%q): refused", name, clean(sc))
		}
	}
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, hc)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: the metadata of its authorization server %s was refused: %v", name, issuer, err)
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationEndpoint: issuer + "/authorize", TokenEndpoint: issuer + "/token",
			RegistrationEndpoint: issuer + "/register", CodeChallengeMethodsSupported: []string{"S256"}}
	}
	if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("MCP server %s: its authorization server %s does not offer PKCE with S256", name, issuer)
	}
	indicator := resource
	if prm != nil {
		indicator = prm.Resource
	}
	return &discovery{resource: resource, indicator: indicator, issuer: asm.Issuer, asm: asm, challenged: challenged, supported: supported}, nil
}

// ask sets what a sign-in asks for: the challenge's scopes, else the client's (when it names
// some), else the resource's scopes_supported; then the client's, then more, then offline_access
// when the authorization server offers it.
func (d *discovery) ask(c *Client, more []string) {
	base := d.challenged
	switch {
	case len(base) == 0 && c != nil && len(c.Scopes) > 0:
		base = c.Scopes
	case len(base) == 0:
		base = d.supported
	}
	if c != nil {
		base = union(base, c.Scopes)
	}
	d.scopes = union(base, more)
	if slices.Contains(d.asm.ScopesSupported, "offline_access") && !slices.Contains(d.scopes, "offline_access") {
		d.scopes = append(d.scopes, "offline_access")
	}
}

type prmCandidate struct{ url, resource string }

// wellKnown are the places of a server's protected-resource metadata when the challenge names
// none (the MCP spec's order: under the endpoint's path, then at the root for the origin).
func wellKnown(resource string) []prmCandidate {
	u, err := url.Parse(resource)
	if err != nil {
		return nil
	}
	at := *u
	at.RawQuery, at.Fragment = "", ""
	at.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
	root := at
	root.Path = "/.well-known/oauth-protected-resource"
	out := []prmCandidate{{at.String(), resource}}
	if strings.Trim(u.Path, "/") != "" {
		out = append(out, prmCandidate{root.String(), u.Scheme + "://" + u.Host})
	}
	return out
}

func challengeParam(cs []oauthex.Challenge, key string) string {
	for _, c := range cs {
		if v := c.Params[key]; v != "" && (key == "resource_metadata" || c.Scheme == "bearer") {
			return v
		}
	}
	return ""
}

// record is what the store keeps for one issuer and resource.
type record struct {
	Issuer       string        `json:"issuer"`
	Resource     string        `json:"resource"`
	ClientID     string        `json:"clientId"`
	ClientSecret string        `json:"clientSecret,omitempty"`
	AuthURL      string        `json:"authUrl"`
	TokenURL     string        `json:"tokenUrl"`
	AuthStyle    int           `json:"authStyle"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
}

func (r *record) config() *oauth2.Config {
	return &oauth2.Config{ClientID: r.ClientID, ClientSecret: r.ClientSecret, Scopes: r.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: r.AuthURL, TokenURL: r.TokenURL, AuthStyle: oauth2.AuthStyle(r.AuthStyle)}}
}

func (f *Flow) load(acct string) (*record, error) {
	v, ok, err := f.Store.Get(acct)
	if err != nil || !ok {
		return nil, err
	}
	var r record
	if json.Unmarshal([]byte(v), &r) != nil || r.Token == nil || r.TokenURL == "" {
		return nil, nil // unreadable: as if absent; a sign-in replaces it
	}
	return &r, nil
}

func (f *Flow) save(r *record) error {
	b, _ := json.Marshal(r)
	if err := f.Store.Set(account(r.Issuer, r.Resource), string(b)); err != nil {
		return err
	}
	var issuers []string
	if v, ok, _ := f.Store.Get(indexAccount(r.Resource)); ok {
		_ = json.Unmarshal([]byte(v), &issuers)
	}
	if !slices.Contains(issuers, r.Issuer) {
		issuers = append(issuers, r.Issuer)
		b, _ := json.Marshal(issuers)
		return f.Store.Set(indexAccount(r.Resource), string(b))
	}
	return nil
}

// SignOut forgets every token of resource (the server's URL), in the store and in this process.
// It reports whether there were any.
func (f *Flow) SignOut(resource string) (bool, error) {
	var issuers []string
	v, ok, err := f.Store.Get(indexAccount(resource))
	if err != nil {
		return false, err
	}
	if ok {
		_ = json.Unmarshal([]byte(v), &issuers)
	}
	for _, iss := range issuers {
		if err := f.Store.Delete(account(iss, resource)); err != nil {
			return false, err
		}
	}
	if err := f.Store.Delete(indexAccount(resource)); err != nil {
		return false, err
	}
	f.mu.Lock()
	for acct, s := range f.sources {
		if strings.HasSuffix(acct, " "+resource) {
			s.forget()
			delete(f.sources, acct)
		}
	}
	f.mu.Unlock()
	return len(issuers) > 0, nil
}

// lookup is the shared source of acct, made from the store on first use; nil when there is no
// token.
func (f *Flow) lookup(acct string) (*source, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.sources[acct]; s != nil && s.live() {
		return s, nil
	}
	r, err := f.load(acct)
	if err != nil || r == nil {
		return nil, err
	}
	return f.installLocked(acct, r), nil
}

func (f *Flow) install(r *record) *source {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.installLocked(account(r.Issuer, r.Resource), r)
}

func (f *Flow) installLocked(acct string, r *record) *source {
	if f.sources == nil {
		f.sources = map[string]*source{}
	}
	if s := f.sources[acct]; s != nil {
		s.replace(r) // the live connections holding it see the new token at once
		return s
	}
	s := &source{f: f, acct: acct, rec: r}
	f.sources[acct] = s
	return s
}

// signIn runs the authorization code grant for d, with the user through open. The callback
// comes to the loopback listener or, pasted by the user, through Handler.Complete.
func (f *Flow) signIn(ctx context.Context, name string, d *discovery, c *Client, open Opener) (_ *record, err error) {
	if c != nil && !c.at(d.issuer) {
		return nil, misplacedClient(name, d.issuer, c)
	}
	port := 0
	if c != nil {
		port = c.CallbackPort
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: opening the sign-in listener failed: %v", name, err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://127.0.0.1:%d%s", ln.Addr().(*net.TCPAddr).Port, CallbackPath)
	hc := f.client()
	r := &record{Issuer: d.issuer, Resource: d.resource, AuthURL: d.asm.AuthorizationEndpoint, TokenURL: d.asm.TokenEndpoint, Scopes: d.scopes}
	switch {
	case c != nil && c.ID != "":
		secret, err := f.secret(name, c)
		if err != nil {
			return nil, err
		}
		r.ClientID, r.ClientSecret = c.ID, secret
		r.AuthStyle = int(oauth2.AuthStyleInParams)
		if secret != "" {
			style, err := secretStyle(d.asm)
			if err != nil {
				return nil, fmt.Errorf("MCP server %s: %v", name, err)
			}
			r.AuthStyle = int(style)
		}
	case f.ClientIDURL != "" && d.asm.ClientIDMetadataDocumentSupported:
		r.ClientID, r.AuthStyle = f.ClientIDURL, int(oauth2.AuthStyleInParams)
	case d.asm.RegistrationEndpoint != "":
		reg, err := oauthex.RegisterClient(ctx, d.asm.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "agentd", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			ApplicationType: "native", Scope: strings.Join(d.scopes, " "),
		}, hc)
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: registering agentd with %s failed: %v", name, d.issuer, err)
		}
		r.ClientID, r.ClientSecret = reg.ClientID, reg.ClientSecret
		r.AuthStyle = int(oauth2.AuthStyleInParams)
		if reg.ClientSecret != "" && reg.TokenEndpointAuthMethod != "client_secret_post" {
			r.AuthStyle = int(oauth2.AuthStyleInHeader)
		}
	default:
		return nil, fmt.Errorf("MCP server %s: its authorization server %s takes neither a client metadata document nor dynamic registration, so agentd cannot register with it", name, d.issuer)
	}
	cfg := r.config()
	cfg.RedirectURL = redirect
	state := rand.Text()
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.indicator))

	got := make(chan callback, 1)
	deliver, stopWaiting := f.await(&pending{name: name, resource: d.resource, state: state, redirect: redirect}, got)
	defer stopWaiting()
	srv := &http.Server{Handler: callbackHandler(state, deliver), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	if err := open(ctx, authURL); err != nil {
		return nil, fmt.Errorf("MCP server %s: the sign-in page could not be opened: %v", name, err)
	}
	f.log().Info("MCP sign-in waiting for the browser", zap.String("mcpServer", name), zap.String("issuer", d.issuer))
	timer := time.NewTimer(f.callbackTimeout())
	defer timer.Stop()
	var cb callback
	defer func() { cb.answer(err) }() // a pasted callback hears how the sign-in ended
	select {
	case cb = <-got:
	case <-timer.C:
		return nil, fmt.Errorf("MCP server %s: no answer came back from the browser within %s, so the sign-in was given up (start it again)", name, f.callbackTimeout())
	case <-ctx.Done():
		return nil, fmt.Errorf("MCP server %s: the sign-in was cancelled", name)
	}
	if cb.err != "" {
		return nil, fmt.Errorf("MCP server %s: %s", name, cb.err)
	}
	// RFC 9207: the callback says which authorization server sent it. One that says another
	// issuer is a mix-up (another server's answer steered to this flow) and is refused.
	if cb.iss == "" && d.asm.AuthorizationResponseIssParameterSupported {
		return nil, fmt.Errorf("MCP server %s: the sign-in answer carried no issuer, though %s says it sends one: refused", name, d.issuer)
	}
	if cb.iss != "" && cb.iss != d.asm.Issuer {
		return nil, fmt.Errorf("MCP server %s: the sign-in answer came from issuer %q, not %q: refused", name, cb.iss, d.asm.Issuer)
	}
	xctx := context.WithValue(ctx, oauth2.HTTPClient, hc)
	tok, err := cfg.Exchange(xctx, cb.code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", d.indicator))
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: the token endpoint's answer was refused: %v", name, err)
	}
	if err := checkToken(tok); err != nil {
		return nil, fmt.Errorf("MCP server %s: %v", name, err)
	}
	r.Token = tok
	if err := f.save(r); err != nil {
		return nil, fmt.Errorf("MCP server %s: signed in, but the token could not be stored: %v", name, err)
	}
	f.log().Info("MCP sign-in done", zap.String("mcpServer", name), zap.String("issuer", d.issuer), zap.Time("expiry", tok.Expiry))
	return r, nil
}

// misplacedClient is the refusal of a client registered with another authorization server
// than the one the server's metadata names.
func misplacedClient(name, issuer string, c *Client) error {
	return fmt.Errorf("MCP server %s: its metadata names the authorization server %s, but the client in its settings (oauth.clientId) is registered with %s; "+
		"agentd sends that client's ID and secret only there, so the sign-in is refused (if the server moved, change oauth.issuer in your settings)", name, issuer, c.Issuer)
}

// secretStyle is how a client secret goes to the token endpoint: HTTP Basic, the default of
// RFC 8414 when the metadata names no method, else in the form when only that is offered.
func secretStyle(asm *oauthex.AuthServerMeta) (oauth2.AuthStyle, error) {
	methods := asm.TokenEndpointAuthMethodsSupported
	switch {
	case len(methods) == 0 || slices.Contains(methods, "client_secret_basic"):
		return oauth2.AuthStyleInHeader, nil
	case slices.Contains(methods, "client_secret_post"):
		return oauth2.AuthStyleInParams, nil
	}
	return 0, fmt.Errorf("its authorization server %s takes a client secret neither by client_secret_basic nor client_secret_post (it offers %s)", asm.Issuer, clean(strings.Join(methods, ", ")))
}

// checkToken refuses a token agentd would not know how to send.
func checkToken(tok *oauth2.Token) error {
	if tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer") {
		return fmt.Errorf("the token endpoint issued a %q token; agentd sends only bearer tokens", tok.TokenType)
	}
	if strings.ContainsAny(tok.AccessToken, "\r\n") {
		return errors.New("the token endpoint issued a token with a line break: refused")
	}
	return nil
}

type callback struct {
	code, iss, err string
	// reply, for a pasted callback, hears how the sign-in ended (nil: nobody waits).
	reply chan<- error
}

func (c callback) answer(err error) {
	if c.reply != nil {
		c.reply <- err
	}
}

// callbackHandler answers the browser's redirect to the loopback listener: the first callback
// with the right state carries the code; one with another state, or an error, ends the sign-in
// with the reason. Other paths are not found.
func callbackHandler(state string, deliver func(callback) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != CallbackPath || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		page := func(code int, msg string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", "default-src 'none'")
			w.WriteHeader(code)
			fmt.Fprintf(w, "<!doctype html><title>agentd</title><p>%s</p>", html.EscapeString(msg))
		}
		if q.Get("state") != state {
			deliver(callback{err: "the sign-in answer carried a state agentd did not send (another page may have tried to sign you in): refused"})
			page(http.StatusBadRequest, "agentd refused this sign-in: its state does not match. Start the sign-in again from your editor.")
			return
		}
		cb := readCallback(q)
		deliver(cb)
		switch {
		case q.Get("error") != "":
			page(http.StatusOK, "The sign-in did not complete: "+clean(q.Get("error"))+". You can close this tab.")
		case cb.err != "":
			page(http.StatusBadRequest, "agentd refused this sign-in: no code.")
		default:
			page(http.StatusOK, "Signed in. You can close this tab and return to your editor.")
		}
	})
}

// readCallback is what a callback with the right state says, wherever it came from (the
// loopback listener, a pasted address): the code and issuer, or why there is none.
func readCallback(q url.Values) callback {
	switch {
	case q.Get("error") != "":
		msg := fmt.Sprintf("the authorization server refused the sign-in: %s %s", clean(q.Get("error")), clean(q.Get("error_description")))
		return callback{err: strings.TrimSpace(msg)}
	case q.Get("code") == "":
		return callback{err: "the sign-in answer carried no code: refused"}
	}
	return callback{code: q.Get("code"), iss: q.Get("iss")}
}

// clean cuts a server-supplied string to one short printable line.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return clip.String(s, 200, "…")
}
