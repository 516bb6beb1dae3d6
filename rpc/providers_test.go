package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/keys"
)

// fakeProvider lists models for agent/providers/test.
type fakeProvider struct {
	cfg providers.Config
	err error
}

func (f *fakeProvider) Stream(ctx context.Context, r *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		if f.err != nil {
			var pe *providers.Error
			errors.As(f.err, &pe)
			yield(providers.Event{Type: providers.EventFailed, Err: pe})
			return
		}
		yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
	}
}
func (f *fakeProvider) ListModels(ctx context.Context) ([]string, error) {
	if f.err != nil {
		return nil, f.err
	}
	return []string{"m2", "text-embedding-3-small", "m1", "nomic-embed-text"}, nil
}

// fakeDialects registers openai- and anthropic-like dialects with the real ones' facts and a
// factory that records each configuration it builds.
func fakeDialects(record func(providers.Config) (providers.Provider, error)) *providers.Registry {
	reg := providers.NewRegistry()
	reg.Register(providers.Dialect{APIType: "openai", New: record, DefaultBaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY", NeedsNetwork: true,
		Presets: []providers.Preset{
			{ID: "ollama", Name: "Ollama", BaseURL: "http://127.0.0.1:11434/v1"},
			{ID: "openrouter", Name: "OpenRouter", BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY"},
		}})
	reg.Register(providers.Dialect{APIType: "anthropic", New: record, DefaultBaseURL: "https://api.anthropic.com", KeyEnv: "ANTHROPIC_API_KEY", NeedsNetwork: true})
	reg.Register(providers.Dialect{APIType: "gemini", New: record, DefaultBaseURL: "https://generativelanguage.googleapis.com", KeyEnv: "GEMINI_API_KEY", NeedsNetwork: true})
	return reg
}

// checkingRegistry is fakeDialects building fake providers: with it the settings check
// endpoints when they are read.
func checkingRegistry() *providers.Registry {
	return fakeDialects(func(cfg providers.Config) (providers.Provider, error) { return &fakeProvider{cfg: cfg}, nil })
}

func TestProviders(t *testing.T) {
	var mu sync.Mutex
	var last providers.Config
	reg := fakeDialects(func(cfg providers.Config) (providers.Provider, error) {
		mu.Lock()
		last = cfg
		mu.Unlock()
		if strings.Contains(cfg.BaseURL, "broken") {
			return &fakeProvider{err: &providers.Error{Kind: providers.ErrNotFound, Status: 404, Message: "not found"}}, nil
		}
		return &fakeProvider{cfg: cfg}, nil
	})
	e := &engine{}
	h := startServer(t, e.options(Options{Registry: reg}))
	h.srv.Providers().Getenv = func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return "sk-env"
		}
		return ""
	}
	h.initialize(t, nil)

	var list protocol.ProvidersListResult
	wantResult(t, h.call(protocol.MethodProvidersList, nil), &list)
	status := map[string]string{}
	base := map[string]string{}
	for _, p := range list.Providers {
		status[p.ProviderID] = p.KeyStatus
		base[p.ProviderID] = p.BaseURL
	}
	if status["anthropic"] != "set" || status["ollama"] != "not_needed" || status["openai"] != "missing" {
		t.Fatalf("key status = %v", status)
	}
	// Base URLs come from the dialect and its presets, not from a second copy in the settings.
	if base["ollama"] != "http://127.0.0.1:11434/v1" || base["openai"] != "https://api.openai.com/v1" {
		t.Fatalf("base URLs = %v", base)
	}

	wantError(t, h.call(protocol.MethodProvidersSet, map[string]any{"providerId": "lan", "apiType": "nope"}), -32602, `apiType: unknown apiType "nope"`)
	wantError(t, h.call(protocol.MethodProvidersSet, map[string]any{"providerId": "lan", "apiType": "openai", "baseUrl": "http://example.com/v1"}), -32602, "baseUrl:")
	wantError(t, h.call(protocol.MethodProvidersSet, map[string]any{"apiType": "openai"}), -32602, "providerId: required")
	m := h.call(protocol.MethodProvidersSet, map[string]any{"providerId": "lan", "apiType": "openai", "baseUrl": "https://gw.example/v1", "model": "m1",
		"headers": map[string]string{"Authorization": "Bearer sk-secret-123"}})
	wantResult(t, m, nil)
	if strings.Contains(string(m.Result), "sk-secret") {
		t.Fatal("headers echoed")
	}
	wantResult(t, h.call(protocol.MethodProvidersList, nil), &list)
	b, _ := json.Marshal(list)
	if strings.Contains(string(b), "sk-secret") {
		t.Fatal("headers listed")
	}
	var tr protocol.ProvidersTestResult
	wantResult(t, h.call(protocol.MethodProvidersTest, map[string]any{"providerId": "lan"}), &tr)
	// Chat and embedding models are listed apart.
	if !tr.OK || strings.Join(tr.Models, ",") != "m1,m2" || strings.Join(tr.EmbeddingModels, ",") != "nomic-embed-text,text-embedding-3-small" {
		t.Fatalf("test = %+v", tr)
	}
	mu.Lock()
	if last.Headers["Authorization"] != "Bearer sk-secret-123" || last.BaseURL != "https://gw.example/v1" {
		t.Fatalf("config = %+v", last)
	}
	mu.Unlock()
	wantResult(t, h.call(protocol.MethodProvidersSet, map[string]any{"providerId": "bad", "apiType": "openai", "baseUrl": "https://broken.example/v1"}), nil)
	wantResult(t, h.call(protocol.MethodProvidersTest, map[string]any{"providerId": "bad"}), &tr)
	if tr.OK || !strings.Contains(tr.Message, "check the URL") {
		t.Fatalf("test of a 404 = %+v", tr)
	}
	wantError(t, h.call(protocol.MethodProvidersTest, map[string]any{"providerId": "ghost"}), -32602, `providerId: no provider "ghost"`)
}

// clientStore serves agent/x/secrets/get from a map and records the keys asked for.
func clientStore(h *harness, values map[string]string) *[]string {
	var mu sync.Mutex
	asked := &[]string{}
	h.onCall = func(m *wireMsg) (any, *wireErr) {
		var p protocol.SecretsGetParams
		json.Unmarshal(m.Params, &p)
		mu.Lock()
		*asked = append(*asked, p.Key)
		mu.Unlock()
		if v, ok := values[p.Key]; ok {
			return protocol.SecretsGetResult{Value: &v}, nil
		}
		return protocol.SecretsGetResult{}, nil
	}
	return asked
}

var withSecrets = map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"agent": map[string]any{"clientCapabilities": map[string]any{"secrets": true}}}}

func TestProviderKeyFromClientSecretsByOrigin(t *testing.T) {
	got := make(chan providers.Config, 4)
	reg := fakeDialects(func(cfg providers.Config) (providers.Provider, error) { got <- cfg; return &fakeProvider{}, nil })
	e := &engine{}
	h := startServer(t, e.options(Options{Registry: reg}))
	h.srv.Providers().Getenv = func(string) string { return "" }
	asked := clientStore(h, map[string]string{"agentd.apiKey.https://api.openai.com": "sk-client"})
	h.initialize(t, withSecrets)
	wantResult(t, h.call(protocol.MethodProvidersTest, map[string]any{"providerId": "openai"}), nil)
	if cfg := <-got; cfg.APIKey != "sk-client" {
		t.Fatalf("key = %q", cfg.APIKey)
	}
	if (*asked)[0] != "agentd.apiKey.https://api.openai.com" {
		t.Fatalf("asked the client for %q", *asked)
	}
}

// TestKeySavedForOneOriginIsNotSentToAnother is the attack of issue 10: the provider "openai"
// keeps its id but its base URL moves to another server; the key the client saved for OpenAI's
// origin must not follow it, nor may OPENAI_API_KEY.
func TestKeySavedForOneOriginIsNotSentToAnother(t *testing.T) {
	got := make(chan providers.Config, 4)
	reg := fakeDialects(func(cfg providers.Config) (providers.Provider, error) { got <- cfg; return &fakeProvider{}, nil })
	e := &engine{}
	h := startServer(t, e.options(Options{Registry: reg}))
	h.srv.Providers().Getenv = func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-openai-env"
		}
		return ""
	}
	asked := clientStore(h, map[string]string{"agentd.apiKey.https://api.openai.com": "sk-openai-client", "agentd.apiKey.openai": "sk-by-id"})
	init := map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"agent": map[string]any{
		"clientCapabilities": map[string]any{"secrets": true},
		"settings":           map[string]any{"providers": map[string]any{"openai": map[string]any{"baseUrl": "https://evil.example/v1"}}},
	}}}
	h.initialize(t, init)
	wantResult(t, h.call(protocol.MethodProvidersTest, map[string]any{"providerId": "openai"}), nil)
	if cfg := <-got; cfg.APIKey != "" || cfg.BaseURL != "https://evil.example/v1" {
		t.Fatalf("the key went to %s: %q", cfg.BaseURL, cfg.APIKey)
	}
	for _, k := range *asked {
		if k != "agentd.apiKey.https://evil.example" {
			t.Fatalf("asked the client for %q", k)
		}
	}
}

// TestConventionalKeyOnlyAtItsVendorsOrigin: OPENAI_API_KEY goes to api.openai.com only; a
// provider at another origin gets its preset's variable or the apiKeyEnv the user names.
func TestConventionalKeyOnlyAtItsVendorsOrigin(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-openai", "OPENROUTER_API_KEY": "sk-or", "LAN_KEY": "sk-lan"}
	reg := fakeDialects(func(cfg providers.Config) (providers.Provider, error) { return &fakeProvider{cfg: cfg}, nil })
	st := config.NewStore()
	if err := st.Set(config.LayerUser, []byte(`{"providers":{
		"openai":{"apiType":"openai"},
		"router":{"apiType":"openai","baseUrl":"https://openrouter.ai/api/v1"},
		"gw":{"apiType":"openai","baseUrl":"https://gw.example/v1"},
		"lan":{"apiType":"openai","baseUrl":"https://gw.example/v1","apiKeyEnv":"LAN_KEY"},
		"box":{"apiType":"openai","baseUrl":"http://192.168.1.9:8000/v1"}}}`)); err != nil {
		t.Fatal(err)
	}
	src := &ProviderSource{Settings: st, Registry: reg, Getenv: func(k string) string { return env[k] }}
	for id, want := range map[string]string{"openai": "sk-openai", "router": "sk-or", "gw": "", "lan": "sk-lan", "box": ""} {
		_, cfg, err := src.Provider(context.Background(), id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if cfg.APIKey != want {
			t.Errorf("%s (%s) got key %q, want %q", id, cfg.BaseURL, cfg.APIKey, want)
		}
	}
}

// TestOfficialOriginWithoutKeyFailsBeforeAnyRequest: no key for api.openai.com is a typed auth
// error naming the variable and `agentd key set`, and no provider is even built.
func TestOfficialOriginWithoutKeyFailsBeforeAnyRequest(t *testing.T) {
	built := 0
	reg := fakeDialects(func(cfg providers.Config) (providers.Provider, error) { built++; return &fakeProvider{}, nil })
	src := &ProviderSource{Settings: config.NewStore(), Registry: reg, Getenv: func(string) string { return "" }}
	_, _, err := src.Provider(context.Background(), "openai")
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.ErrAuth || !strings.Contains(pe.Message, "OPENAI_API_KEY") || !strings.Contains(pe.Message, "agentd key set https://api.openai.com") {
		t.Fatalf("err = %v", err)
	}
	if built != 0 {
		t.Fatal("a provider was built without its key")
	}
	// A plain-http refusal is a settings error, not an auth one.
	st := config.NewStore()
	st.Set(config.LayerUser, []byte(`{"providers":{"x":{"apiType":"openai","baseUrl":"http://gw.example/v1"}}}`))
	src.Settings = st
	_, _, err = src.Provider(context.Background(), "x")
	var ke *config.KeyError
	if !errors.As(err, &ke) || ke.Key != "providers.x.baseUrl" || errors.As(err, &pe) {
		t.Fatalf("cleartext refusal = %#v", err)
	}
}

// TestProviderErrorsNeverCarryTheKey: a server whose error body quotes the key (and the
// Authorization header) has it redacted before the message reaches anyone.
func TestProviderErrorsNeverCarryTheKey(t *testing.T) {
	reg := fakeDialects(func(cfg providers.Config) (providers.Provider, error) {
		return &fakeProvider{err: &providers.Error{Kind: providers.ErrAuth, Status: 401,
			Message: "Incorrect API key provided: " + cfg.APIKey, Detail: `{"error":"bad header Bearer ` + cfg.APIKey + `"}`}}, nil
	})
	src := &ProviderSource{Settings: config.NewStore(), Registry: reg, Getenv: func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-live-abcdef123456"
		}
		return ""
	}}
	prov, _, err := src.Provider(context.Background(), "openai")
	if err != nil {
		t.Fatal(err)
	}
	for ev := range prov.Stream(context.Background(), &providers.Request{}) {
		if ev.Type == providers.EventFailed {
			if strings.Contains(ev.Err.Message+ev.Err.Detail, "sk-live") || !strings.Contains(ev.Err.Message, providers.Redacted) {
				t.Fatalf("stream error = %+v", ev.Err)
			}
		}
	}
	_, err = prov.(providers.ModelLister).ListModels(context.Background())
	if err == nil || strings.Contains(err.Error(), "sk-live") {
		t.Fatalf("list error = %v", err)
	}
}

// TestOneProviderPerResolvedConfig: the registry keeps the provider a configuration built, so
// what it learned survives the turn; a changed configuration builds a new one.
func TestOneProviderPerResolvedConfig(t *testing.T) {
	built := 0
	reg := fakeDialects(func(cfg providers.Config) (providers.Provider, error) { built++; return &fakeProvider{cfg: cfg}, nil })
	st := config.NewStore()
	src := &ProviderSource{Settings: st, Registry: reg, Getenv: func(string) string { return "" }}
	for range 3 {
		if _, _, err := src.Provider(context.Background(), "ollama"); err != nil {
			t.Fatal(err)
		}
	}
	if built != 1 {
		t.Fatalf("built %d providers for one configuration", built)
	}
	st.Set(config.LayerClient, []byte(`{"providers":{"ollama":{"model":"other"}}}`))
	src.Provider(context.Background(), "ollama")
	if built != 2 {
		t.Fatalf("built %d providers for two configurations", built)
	}
}

var _ keys.Store = (*keys.File)(nil)

// mapStore is a keys.Store in memory; local says whether it reports its lookups as local.
type mapStore struct {
	keys  map[string]string
	local bool
	mu    sync.Mutex
	gets  int
}

func (s *mapStore) Get(origin string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	k, ok := s.keys[origin]
	return k, ok, nil
}
func (s *mapStore) Set(origin, key string) error { s.keys[origin] = key; return nil }
func (s *mapStore) Delete(origin string) error   { delete(s.keys, origin); return nil }
func (s *mapStore) Where() string                { return "memory" }

type localMapStore struct{ *mapStore }

func (localMapStore) Local() bool { return true }

// TestProviderListLocalStore holds the list the same whether the store's lookups run in turn
// (a store that says they are local: no keyring) or side by side.
func TestProviderListLocalStore(t *testing.T) {
	var lists [][]protocol.ProviderInfo
	for _, local := range []bool{false, true} {
		store := config.NewStore()
		reg := checkingRegistry()
		if err := store.UseDialects(reg); err != nil {
			t.Fatal(err)
		}
		ms := &mapStore{keys: map[string]string{"https://api.openai.com": "sk-stored"}}
		var secrets keys.Store = ms
		if local {
			secrets = localMapStore{ms}
		}
		p := &ProviderSource{Settings: store, Registry: reg, Secrets: secrets, Getenv: func(k string) string {
			if k == "ANTHROPIC_API_KEY" {
				return "sk-env"
			}
			return ""
		}}
		list := p.List(context.Background())
		if ms.gets == 0 {
			t.Fatalf("local=%v: the store was never asked", local)
		}
		lists = append(lists, list)
	}
	if !reflect.DeepEqual(lists[0], lists[1]) {
		t.Fatalf("side by side %+v\nin turn %+v", lists[0], lists[1])
	}
	status := map[string]string{}
	for _, p := range lists[1] {
		status[p.ProviderID] = p.KeyStatus
	}
	if status["anthropic"] != "set" || status["openai"] != "set" || status["ollama"] != "not_needed" {
		t.Fatalf("key status = %v", status)
	}
}

// Issue 26 item 10: the values of custom secret headers (a gateway's X-Custom-Token, a
// Private-Token) are redacted like the key; an ordinary header's value is not.
func TestSecretsOfCustomSecretHeaders(t *testing.T) {
	got := secretsOf(providers.Config{APIKey: "sk-main-key-0000", Headers: map[string]string{
		"X-Custom-Token":    "gw-token-123456",
		"Private-Token":     "pt-abcdef",
		"X-Client-Secret":   "cs-999999",
		"Authorization":     "Bearer az-1111111",
		"Anthropic-Version": "2023-06-01",
	}})
	for _, want := range []string{"sk-main-key-0000", "gw-token-123456", "pt-abcdef", "cs-999999", "Bearer az-1111111", "az-1111111"} {
		if !slices.Contains(got, want) {
			t.Errorf("secretsOf lacks %q: %q", want, got)
		}
	}
	if slices.Contains(got, "2023-06-01") {
		t.Errorf("an ordinary header's value is redacted: %q", got)
	}
}
