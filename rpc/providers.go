package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/keys"
)

// ProviderSource resolves a providerId into a ready provider: the merged settings, the registry
// of dialects compiled in (which keeps one provider per resolved configuration), and a key found
// for the provider's origin by providers/keys. Keys are never logged, and never appear in the
// errors and notices the provider passes on (providers.Redact).
type ProviderSource struct {
	Settings *config.Store
	Registry *providers.Registry
	Secrets  keys.Store
	Log      *zap.Logger
	// ClientSecret asks the client's secret store (agent/x/secrets/get); set once the bridge
	// exists. HasClientSecrets says the client serves it.
	ClientSecret     func(ctx context.Context, key string) (string, bool, error)
	HasClientSecrets bool
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string

	mu      sync.Mutex
	headers map[string]keys.Headers
	set     map[string]map[string]any // providers/set entries, the LayerSet of the settings
	// changes counts what changes a resolution besides the settings: headers set, a key
	// forgotten (see Revision).
	changes uint64
}

// Revision moves whenever a provider may resolve differently because of something agentd
// did: the settings changed (their Generation), headers were set, a key it keeps was forgotten.
// A key changed outside the daemon (the editor's secret store, `agentd key set`) does not move
// it: the completion engine, which keeps a resolution while Revision stays, bounds that by time.
func (p *ProviderSource) Revision() uint64 {
	p.mu.Lock()
	n := p.changes
	p.mu.Unlock()
	if p.Settings == nil {
		return n
	}
	return p.Settings.Generation() + n // both only grow, so the sum moves when either does
}

// changed moves Revision for a change outside the settings.
func (p *ProviderSource) changed() {
	p.mu.Lock()
	p.changes++
	p.mu.Unlock()
}

func (p *ProviderSource) log() *zap.Logger {
	if p.Log == nil {
		return zap.NewNop()
	}
	return p.Log
}

func (p *ProviderSource) resolve(ctx context.Context, id string, askClient bool) (keys.Resolved, error) {
	st, ok := config.SettingsFrom(ctx)
	if !ok {
		st = p.Settings.Get()
	}
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
		return keys.Resolved{}, &config.KeyError{Key: "providerId", Msg: fmt.Sprintf("no provider %q in the settings (have: %s)", id, strings.Join(ids, ", "))}
	}
	r := &keys.Resolver{Registry: p.Registry, Store: p.Secrets, Getenv: p.Getenv,
		OnError: func(source string, err error) {
			p.log().Warn("key lookup", zap.String("provider", id), zap.String("source", source), zap.Error(err))
		}}
	if askClient && p.HasClientSecrets {
		r.Client = p.ClientSecret
	}
	p.mu.Lock()
	h, hok := p.headers[id]
	p.mu.Unlock()
	var set *keys.Headers
	if hok {
		set = &h
	}
	return r.Resolve(ctx, id, ps, set, askClient)
}

// Provider implements session.ProviderSource. A provider at an origin that requires a key and
// has none fails here, before any request, with a typed auth error.
func (p *ProviderSource) Provider(ctx context.Context, id string) (providers.Provider, providers.Config, error) {
	r, err := p.resolve(ctx, id, true)
	if err != nil {
		return nil, r.Config, err
	}
	if e := r.MissingKey(); e != nil {
		return nil, r.Config, e
	}
	prov, err := p.Registry.New(r.Config)
	if err != nil {
		return nil, r.Config, err
	}
	p.log().Debug("provider resolved", zap.String("provider", r.Config.ID), zap.String("apiType", r.Config.APIType),
		zap.String("origin", r.Target.Endpoint.Origin), zap.String("keySource", r.Source)) // never the key
	return providers.Redact(prov, secretsOf(r.Config)...), r.Config, nil
}

// secretsOf lists what must never reach the user from a provider's messages: its key and the
// values of its credential headers and of custom headers whose names say they hold a secret
// (keys.IsSecretHeader), with and without a "Bearer " scheme.
func secretsOf(cfg providers.Config) []string {
	out := []string{cfg.APIKey}
	for k, v := range cfg.Headers {
		if keys.IsSecretHeader(k) {
			out = append(out, v)
			if _, tok, ok := strings.Cut(v, " "); ok {
				out = append(out, tok)
			}
		}
	}
	return out
}

func keyStatus(s keys.Status) string {
	switch s {
	case keys.StatusSet:
		return protocol.KeySet
	case keys.StatusNotNeeded:
		return protocol.KeyNotNeeded
	}
	return protocol.KeyMissing
}

// ImagesAccepted reports whether the default provider's model reads images, for the
// promptCapabilities.image of initialize (a session says it again for its own model).
func (p *ProviderSource) ImagesAccepted() bool {
	st := p.Settings.Get()
	return providers.CapabilitiesOf(st.Providers[st.Provider]).Images
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
	out := make([]protocol.ProviderInfo, len(ids))
	lookup := func(i int, id string) {
		ps := st.Providers[id]
		r, err := p.resolve(ctx, id, false)
		out[i] = protocol.ProviderInfo{ProviderID: id, APIType: ps.APIType, BaseURL: r.Target.BaseURL, Model: ps.Model, KeyStatus: keyStatus(r.Status)}
		if err != nil {
			out[i].KeyStatus = protocol.KeyMissing
		}
	}
	if local, ok := p.Secrets.(interface{ Local() bool }); ok && local.Local() {
		// Lookups in a file (no keyring: keys.Auto.Local) are quicker in turn than a goroutine
		// each: four goroutines whose stacks grew to 8 KB were ~11 page faults of every start.
		for i, id := range ids {
			lookup(i, id)
		}
		return out
	}
	// The lookups run side by side: a keyring lookup is a D-Bus round trip, or on macOS a run
	// of /usr/bin/security, and initialize waits for all of them.
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { lookup(i, id) })
	}
	wg.Wait()
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
	t, err := p.Registry.Target(params.ProviderID, config.ProviderSettings{APIType: params.APIType, BaseURL: params.BaseURL, Model: params.Model})
	if err != nil {
		var ke *config.KeyError
		if errors.As(err, &ke) {
			return paramError(ke.Key, ke.Msg)
		}
		return err
	}
	origin := t.Endpoint.Origin
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
		p.headers = map[string]keys.Headers{}
	}
	if len(params.Headers) > 0 {
		h := make(map[string]string, len(params.Headers))
		for k, v := range params.Headers {
			h[k] = v
		}
		p.headers[params.ProviderID] = keys.Headers{Origin: origin, Headers: h}
	} else {
		delete(p.headers, params.ProviderID)
	}
	p.changes++
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
	res := protocol.ProvidersTestResult{Models: []string{}, EmbeddingModels: []string{}}
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
	res.OK = true
	for _, m := range models {
		if providers.IsEmbeddingModel(m) {
			res.EmbeddingModels = append(res.EmbeddingModels, m)
		} else {
			res.Models = append(res.Models, m)
		}
	}
	res.Message = fmt.Sprintf("%s answered with %d models", cfg.BaseURL, len(res.Models))
	if n := len(res.EmbeddingModels); n > 0 {
		res.Message += fmt.Sprintf(" and %d embedding models", n)
	}
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

// defaultSettings is the built-in settings, checked against the registry's dialects when it has
// every apiType the defaults name (a test registry may hold fewer).
func defaultSettings(reg *providers.Registry, log *zap.Logger) *config.Store {
	st := config.NewStore()
	if len(reg.APITypes()) > 0 {
		if err := st.UseDialects(reg); err != nil {
			log.Debug("settings not checked against the registry's dialects", zap.Error(err))
		}
	}
	return st
}

// DefaultSecretStore is agentd's own store: the OS keyring, else a 0600 file under
// config.ConfigDir (providers/keys).
func DefaultSecretStore() keys.Store { return keys.Default() }
