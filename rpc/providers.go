package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/rpc/protocol"
)

// conventionalKeyEnv is the environment variable each apiType reads its key from when the
// settings name no apiKeyEnv.
var conventionalKeyEnv = map[string]string{
	"anthropic": "ANTHROPIC_API_KEY",
	"openai":    "OPENAI_API_KEY",
	"gemini":    "GEMINI_API_KEY",
}

// ProviderSource resolves a providerId into a ready provider: the merged settings, the registry
// of dialects compiled in, and a key found for the provider's origin. Keys come, in order, from
// agent/providers/set headers (held in memory, bound to the origin they were set for), the
// environment (apiKeyEnv, else the apiType's variable; only when the base URL was not chosen by
// a project file alone), agentd's own secret store (keyed by origin), and the client's secret
// store. Keys are never logged.
type ProviderSource struct {
	Settings *config.Store
	Registry *providers.Registry
	Secrets  *SecretStore
	Log      *zap.Logger
	// ClientSecret asks the client's secret store (agent/x/secrets/get); set once the bridge
	// exists. HasClientSecrets says the client serves it.
	ClientSecret     func(ctx context.Context, key string) (string, bool, error)
	HasClientSecrets bool
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string

	mu      sync.Mutex
	headers map[string]setHeaders
	set     map[string]map[string]any // providers/set entries, the LayerSet of the settings
}

type setHeaders struct {
	origin  string
	headers map[string]string
}

func (p *ProviderSource) getenv(k string) string {
	if p.Getenv != nil {
		return p.Getenv(k)
	}
	return os.Getenv(k)
}

func (p *ProviderSource) log() *zap.Logger {
	if p.Log == nil {
		return zap.NewNop()
	}
	return p.Log
}

// resolved is a provider's configuration with where its key came from.
type resolved struct {
	cfg       providers.Config
	endpoint  providers.Endpoint
	keyStatus string
	keySource string
	keyEnv    string // the environment variable the key is read from ("" when the apiType has none)
}

// keyEnv is the environment variable holding the provider's key: apiKeyEnv, else the apiType's
// conventional one.
func keyEnv(ps config.ProviderSettings) string {
	if ps.APIKeyEnv != "" {
		return ps.APIKeyEnv
	}
	return conventionalKeyEnv[ps.APIType]
}

// ClientSecretKey is the agent/x/secrets/get key of a provider's API key.
func ClientSecretKey(providerID string) string { return "agentd.apiKey." + providerID }

func (p *ProviderSource) resolve(ctx context.Context, id string, askClient bool) (resolved, error) {
	st := p.Settings.Get()
	if id == "" {
		id = st.Provider
	}
	ps, ok := st.Providers[id]
	if !ok {
		ids := make([]string, 0, len(st.Providers))
		for k := range st.Providers {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		return resolved{}, &config.KeyError{Key: "providerId", Msg: fmt.Sprintf("no provider %q in the settings (have: %s)", id, strings.Join(ids, ", "))}
	}
	base := ps.EffectiveBaseURL()
	r := resolved{cfg: providers.Config{ID: id, APIType: ps.APIType, BaseURL: base, Model: ps.Model}, keyEnv: keyEnv(ps)}
	if base == "" || ps.APIType == "replay" { // a dialect without a network endpoint (replay reads a local script)
		r.keyStatus = protocol.KeyNotNeeded
		return r, nil
	}
	ep, err := providers.CheckEndpoint(base)
	if err != nil {
		return r, &config.KeyError{Key: "providers." + id + ".baseUrl", Msg: err.Error()}
	}
	r.endpoint = ep

	// 1. providers/set headers, only for the origin they were set for.
	p.mu.Lock()
	h, hok := p.headers[id]
	p.mu.Unlock()
	if hok && h.origin == ep.Origin {
		r.cfg.Headers = h.headers
		for k := range h.headers {
			if isCredentialHeader(k) {
				r.keyStatus, r.keySource = protocol.KeySet, "providers/set"
				return r, nil
			}
		}
	}
	// 2. the environment, for a base URL the user chose.
	if env := r.keyEnv; env != "" && p.Settings.BaseURLTrusted(id) {
		if v := p.getenv(env); v != "" {
			r.cfg.APIKey, r.keyStatus, r.keySource = v, protocol.KeySet, "env "+env
			return r, nil
		}
	}
	// 3. agentd's own store, by origin.
	if p.Secrets != nil {
		if v, ok := p.Secrets.Get(ep.Origin); ok {
			r.cfg.APIKey, r.keyStatus, r.keySource = v, protocol.KeySet, "agentd secret store"
			return r, nil
		}
	}
	// 4. the client's store, never for a base URL only the project file chose.
	if askClient && p.HasClientSecrets && p.ClientSecret != nil && p.Settings.BaseURLTrusted(id) {
		if v, ok, err := p.ClientSecret(ctx, ClientSecretKey(id)); err != nil {
			p.log().Debug("client secret store", zap.String("provider", id), zap.Error(err))
		} else if ok && v != "" {
			r.cfg.APIKey, r.keyStatus, r.keySource = v, protocol.KeySet, "client secret store"
			return r, nil
		}
	}
	if ep.KeyNeed == providers.KeyNotNeeded {
		r.keyStatus = protocol.KeyNotNeeded
	} else {
		r.keyStatus = protocol.KeyMissing
	}
	return r, nil
}

func isCredentialHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key":
		return true
	}
	return false
}

// Provider implements session.ProviderSource.
func (p *ProviderSource) Provider(ctx context.Context, id string) (providers.Provider, providers.Config, error) {
	r, err := p.resolve(ctx, id, true)
	if err != nil {
		return nil, providers.Config{}, err
	}
	if r.keyStatus == protocol.KeyMissing && r.endpoint.KeyNeed == providers.KeyRequired {
		env := r.keyEnv
		if env == "" {
			env = "the provider's apiKeyEnv"
		}
		return nil, r.cfg, fmt.Errorf("provider %q needs an API key for %s and none was found (set %s, or store one in the editor)",
			r.cfg.ID, r.endpoint.Origin, env)
	}
	prov, err := p.Registry.New(r.cfg)
	if err != nil {
		return nil, r.cfg, err
	}
	p.log().Debug("provider resolved", zap.String("provider", r.cfg.ID), zap.String("apiType", r.cfg.APIType),
		zap.String("origin", r.endpoint.Origin), zap.String("keySource", r.keySource)) // never the key
	return prov, r.cfg, nil
}

// List describes every configured provider without asking the client anything (it runs inside
// initialize, before the client can answer requests).
func (p *ProviderSource) List(ctx context.Context) []protocol.ProviderInfo {
	st := p.Settings.Get()
	ids := make([]string, 0, len(st.Providers))
	for id := range st.Providers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]protocol.ProviderInfo, 0, len(ids))
	for _, id := range ids {
		ps := st.Providers[id]
		info := protocol.ProviderInfo{ProviderID: id, APIType: ps.APIType, BaseURL: ps.EffectiveBaseURL(), Model: ps.Model}
		r, err := p.resolve(ctx, id, false)
		switch {
		case err != nil:
			info.KeyStatus = protocol.KeyMissing
		default:
			info.KeyStatus = r.keyStatus
		}
		out = append(out, info)
	}
	return out
}

// Set applies agent/providers/set: the provider's settings go into the settings' providers/set
// layer, its headers stay in memory bound to the provider's origin.
func (p *ProviderSource) Set(params protocol.ProvidersSetParams) error {
	if err := required("providerId", params.ProviderID); err != nil {
		return err
	}
	if err := required("apiType", params.APIType); err != nil {
		return err
	}
	known := p.Registry.APITypes()
	if !slices.Contains(known, params.APIType) {
		return paramError("apiType", fmt.Sprintf("unknown apiType %q (known: %s)", params.APIType, strings.Join(known, ", ")))
	}
	base := params.BaseURL
	if base == "" {
		base = config.DefaultBaseURL(params.APIType)
	}
	var origin string
	if base != "" {
		ep, err := providers.CheckEndpoint(base)
		if err != nil {
			return paramError("baseUrl", err.Error())
		}
		origin = ep.Origin
	}
	for k, v := range params.Headers {
		if !validHeaderName(k) {
			return paramError("headers", fmt.Sprintf("%q is not a valid header name", k))
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return paramError("headers."+k, "not a valid header value") // the value is never echoed
		}
	}
	entry := map[string]any{"apiType": params.APIType}
	if params.BaseURL != "" {
		entry["baseUrl"] = params.BaseURL
	}
	if params.Model != "" {
		entry["model"] = params.Model
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	next := map[string]map[string]any{}
	for k, v := range p.set {
		next[k] = v
	}
	next[params.ProviderID] = entry
	layer, _ := json.Marshal(map[string]any{"providers": next})
	if err := p.Settings.Set(config.LayerSet, layer); err != nil {
		var ke *config.KeyError
		if errors.As(err, &ke) {
			return paramError(strings.TrimPrefix(ke.Key, "providers."+params.ProviderID+"."), ke.Msg)
		}
		return err
	}
	p.set = next
	if p.headers == nil {
		p.headers = map[string]setHeaders{}
	}
	if len(params.Headers) > 0 {
		h := make(map[string]string, len(params.Headers))
		for k, v := range params.Headers {
			h[k] = v
		}
		p.headers[params.ProviderID] = setHeaders{origin: origin, headers: h}
	} else {
		delete(p.headers, params.ProviderID)
	}
	p.log().Info("provider set", zap.String("provider", params.ProviderID), zap.String("apiType", params.APIType),
		zap.String("origin", origin), zap.Int("headers", len(params.Headers))) // names and values stay out
	return nil
}

// validHeaderName reports whether k is an RFC 9110 token.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range []byte(k) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Test lists the provider's models once: the cheapest request that proves URL and key.
func (p *ProviderSource) Test(ctx context.Context, id string) (protocol.ProvidersTestResult, error) {
	res := protocol.ProvidersTestResult{Models: []string{}}
	prov, cfg, err := p.Provider(ctx, id)
	if err != nil {
		var ke *config.KeyError
		if errors.As(err, &ke) && ke.Key == "providerId" {
			return res, err
		}
		res.Message = err.Error()
		return res, nil
	}
	lister, ok := prov.(providers.ModelLister)
	if !ok {
		res.Message = fmt.Sprintf("the %s dialect cannot list models, so there is nothing to test without spending tokens", cfg.APIType)
		return res, nil
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	models, err := lister.ListModels(ctx)
	if err != nil {
		if parent.Err() != nil {
			// The client cancelled ($/cancelRequest): the answer is -32800, not a failed test.
			return res, parent.Err()
		}
		var pe *providers.Error
		switch {
		case errors.As(err, &pe) && (pe.Kind == providers.ErrNotFound || pe.Status == http.StatusNotFound):
			res.Message = fmt.Sprintf("%s answered 404 for the model list: check the URL (%s)", cfg.BaseURL, pe.Message)
		case errors.As(err, &pe):
			res.Message = pe.Message
		default:
			res.Message = err.Error()
		}
		return res, nil
	}
	sort.Strings(models)
	res.OK, res.Models = true, append(res.Models, models...)
	res.Message = fmt.Sprintf("%s answered with %d models", cfg.BaseURL, len(models))
	return res, nil
}

// ---- handlers ----

func validateProviderID(p *protocol.ProvidersTestParams) error {
	return required("providerId", p.ProviderID)
}

type providersListParams struct{}

func (s *Server) providersList(ctx context.Context, _ *providersListParams) (protocol.ProvidersListResult, error) {
	return protocol.ProvidersListResult{Providers: s.provs.List(ctx)}, nil
}

func (s *Server) providersSet(ctx context.Context, p *protocol.ProvidersSetParams) (empty, error) {
	return empty{}, s.provs.Set(*p)
}

func (s *Server) providersTest(ctx context.Context, p *protocol.ProvidersTestParams) (protocol.ProvidersTestResult, error) {
	return s.provs.Test(ctx, p.ProviderID)
}

// ---- agentd's own secret store ----

// SecretStore is agentd's own key file, $XDG_CONFIG_HOME/agentd/secrets.json (mode 0600): a JSON
// object from origin (scheme://host:port) to key. A key is only ever used for the origin it is
// filed under.
type SecretStore struct {
	Path string
	mu   sync.Mutex
}

// DefaultSecretStore is the store under config.ConfigDir.
func DefaultSecretStore() *SecretStore {
	return &SecretStore{Path: filepath.Join(config.ConfigDir(), "secrets.json")}
}

func (s *SecretStore) load() (map[string]string, error) {
	b, err := os.ReadFile(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return s.parse(b)
}

func (s *SecretStore) parse(b []byte) (map[string]string, error) {
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of origin to key", s.Path)
	}
	return m, nil
}

// Get returns the key filed for origin (any URL under it is accepted). The mode is checked on the
// file that is read, opened once: Set replaces the file by rename, so a separate Stat could look
// at another file than the one read.
func (s *SecretStore) Get(origin string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.Open(s.Path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Mode().Perm()&0o077 != 0 {
		return "", false // readable by others: refuse rather than use a leaked key
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "", false
	}
	m, err := s.parse(b)
	if err != nil {
		return "", false
	}
	for k, v := range m {
		if providers.KeyAllowed(k, origin) {
			return v, true
		}
	}
	return "", false
}

// Set files key under origin, creating the file with mode 0600.
func (s *SecretStore) Set(origin, key string) error {
	o := providers.Origin(origin)
	if o == "" {
		return fmt.Errorf("%q is not an http(s) URL", origin)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return err
	}
	if key == "" {
		delete(m, o)
	} else {
		m[o] = key
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return err
	}
	tmp := s.Path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.Path)
}
