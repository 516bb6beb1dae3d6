package providers

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/agentd-dev/agentd/config"
)

// Factory builds a provider from its resolved configuration.
type Factory func(cfg Config) (Provider, error)

// Dialect is everything agentd knows about one wire dialect, in one place. Each dialect package
// declares one, cmd/agentd registers it in one line, and everything else is derived from it:
// the base URL a provider without one gets, which environment variable may send its key where,
// the presets, the endpoint checks made when settings are read.
type Dialect struct {
	// APIType is the settings' apiType ("anthropic", "openai", "gemini", "replay").
	APIType string
	// New builds a provider from a resolved configuration.
	New Factory
	// DefaultBaseURL is the vendor's own API, used when the settings name no base URL; "" when
	// a provider of this dialect must name one. Its origin is the dialect's official origin: the
	// only one its conventional KeyEnv is sent to, and one that requires a key.
	DefaultBaseURL string
	// KeyEnv is the conventional environment variable of the vendor's key (ANTHROPIC_API_KEY).
	KeyEnv string
	// Presets are well-known servers of this dialect, known by provider id (openrouter, ollama).
	Presets []Preset
	// NeedsNetwork is false for a dialect that reads a local file instead (replay): its
	// baseUrl is a path or file:// URL, and it has no endpoint and no key.
	NeedsNetwork bool
}

// Preset is a well-known server of a dialect. A provider whose id names a preset gets its base
// URL; a provider whose base URL has the preset's origin may use the preset's key variable.
type Preset struct {
	ID   string
	Name string // for messages: "Ollama rejected the request…"
	// BaseURL is where the server answers (local ones by address, never by name).
	BaseURL string
	// KeyEnv is the variable the server's key is read from, sent only to BaseURL's origin;
	// "" for servers that need none.
	KeyEnv string
	// OutputSchema is how the server takes a JSON Schema constraining its output
	// (Config.OutputSchema), "" when agentd does not know it to.
	OutputSchema string
}

// Registry holds the dialects compiled in and the providers built from them: one provider per
// resolved configuration, so what a provider learns (Gemini's context cache, an OpenAI-compatible
// server's refused parameters, a replay script's position) lives on that instance for as long
// as the configuration does not change.
type Registry struct {
	mu        sync.Mutex
	dialects  map[string]Dialect
	instances map[string]Provider
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{dialects: map[string]Dialect{}, instances: map[string]Provider{}}
}

// Register adds a dialect. An empty or duplicate apiType, or no factory, is a programming error.
func (r *Registry) Register(d Dialect) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d.APIType == "" || d.New == nil {
		panic("providers: a dialect needs an APIType and a New")
	}
	if _, dup := r.dialects[d.APIType]; dup {
		panic("providers: apiType registered twice: " + d.APIType)
	}
	r.dialects[d.APIType] = d
}

// Dialect returns the dialect registered for apiType.
func (r *Registry) Dialect(apiType string) (Dialect, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.dialects[apiType]
	return d, ok
}

// New returns the provider for cfg: the one already built for the same configuration (key and
// headers included), else a new one from cfg.APIType's dialect.
func (r *Registry) New(cfg Config) (Provider, error) {
	key := cfg.cacheKey()
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.instances[key]; ok {
		return p, nil
	}
	d, ok := r.dialects[cfg.APIType]
	if !ok {
		return nil, fmt.Errorf("unknown apiType %q (known: %s)", cfg.APIType, strings.Join(r.apiTypes(), ", "))
	}
	p, err := d.New(cfg)
	if err != nil {
		return nil, err
	}
	r.instances[key] = p
	return p, nil
}

// cacheKey identifies a resolved configuration. It holds the key, so it never leaves memory.
func (c Config) cacheKey() string {
	var b strings.Builder
	for _, s := range []string{c.ID, c.APIType, c.BaseURL, c.Model, c.APIKey, c.OutputSchema} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	names := make([]string, 0, len(c.Headers))
	for k := range c.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		b.WriteString(k + "\x01" + c.Headers[k] + "\x00")
	}
	return b.String()
}

// APITypes lists the registered apiTypes, sorted.
func (r *Registry) APITypes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.apiTypes()
}

func (r *Registry) apiTypes() []string {
	out := make([]string, 0, len(r.dialects))
	for k := range r.dialects {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Target is where a configured provider's requests go and which environment variable may supply
// its key there: all derived from its settings and its dialect.
type Target struct {
	// BaseURL is the settings' baseUrl, else the preset's (by provider id), else the dialect's.
	BaseURL string
	// Endpoint is CheckEndpoint's verdict on BaseURL, with KeyNeed raised to KeyRequired at the
	// dialect's official origin. Zero for a dialect that needs no network.
	Endpoint Endpoint
	// KeyEnv is the one environment variable whose value may be sent to this origin: the
	// settings' apiKeyEnv; else the variable of the preset (or of the dialect itself) whose
	// origin this is; "" when no variable may.
	KeyEnv string
	// KeyHint names what the user should set when the key is missing: KeyEnv, else apiKeyEnv.
	KeyHint string
	// NeedsNetwork is the dialect's: false means no endpoint and no key.
	NeedsNetwork bool
}

// Target resolves provider id's settings. Its errors are *config.KeyError naming the offending
// key of the provider entry ("baseUrl", "apiType"), so the settings can report them when read.
func (r *Registry) Target(id string, ps config.ProviderSettings) (Target, error) {
	d, ok := r.Dialect(ps.APIType)
	if !ok {
		return Target{}, &config.KeyError{Key: "apiType", Msg: fmt.Sprintf("unknown apiType %q (known: %s)", ps.APIType, strings.Join(r.APITypes(), ", "))}
	}
	t := Target{BaseURL: ps.BaseURL, NeedsNetwork: d.NeedsNetwork}
	if !d.NeedsNetwork {
		// A replay script is a local file: a path or a file:// URL, never a network origin.
		if u, err := url.Parse(ps.BaseURL); ps.BaseURL != "" && (err != nil || u.Scheme != "" && u.Scheme != "file") {
			return t, &config.KeyError{Key: "baseUrl", Msg: fmt.Sprintf("a %s provider reads a local file: a path or a file:// URL", ps.APIType)}
		}
		return t, nil
	}
	if t.BaseURL == "" {
		if p, ok := d.Preset(id); ok {
			t.BaseURL = p.BaseURL
		} else {
			t.BaseURL = d.DefaultBaseURL
		}
	}
	if t.BaseURL == "" {
		return t, &config.KeyError{Key: "baseUrl", Msg: fmt.Sprintf("required for apiType %q", ps.APIType)}
	}
	ep, err := CheckEndpoint(t.BaseURL)
	if err != nil {
		return t, &config.KeyError{Key: "baseUrl", Msg: err.Error()}
	}
	if d.DefaultBaseURL != "" && ep.Origin == Origin(d.DefaultBaseURL) {
		ep.KeyNeed = KeyRequired
	}
	t.Endpoint = ep
	switch {
	case ps.APIKeyEnv != "":
		t.KeyEnv = ps.APIKeyEnv
	case d.KeyEnv != "" && ep.Origin == Origin(d.DefaultBaseURL):
		t.KeyEnv = d.KeyEnv
	default:
		for _, p := range d.Presets {
			if p.KeyEnv != "" && ep.Origin == Origin(p.BaseURL) {
				t.KeyEnv = p.KeyEnv
				break
			}
		}
	}
	t.KeyHint = t.KeyEnv
	if t.KeyHint == "" {
		t.KeyHint = "the provider's apiKeyEnv"
	}
	return t, nil
}

// CheckProvider implements config.Dialects: the settings check apiType and the endpoint rules
// of every provider entry when they are read, not when the first request is sent.
func (r *Registry) CheckProvider(id string, ps config.ProviderSettings) error {
	_, err := r.Target(id, ps)
	return err
}

// VendorKeyEnv are model vendors' conventional key variables, whether or not a dialect or
// preset compiled in reads them: a user's shell may hold them for other tools, and a program
// agentd starts must see none of them. KeyEnvNames adds the dialects' and presets' own.
var VendorKeyEnv = []string{
	"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY",
	"GOOGLE_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY", "XAI_API_KEY", "AZURE_OPENAI_API_KEY",
	"TOGETHER_API_KEY", "FIREWORKS_API_KEY", "CEREBRAS_API_KEY", "COHERE_API_KEY", "PERPLEXITY_API_KEY",
	"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "AGENTD_API_KEY",
}

// KeyEnvNames lists every environment variable that may hold a provider key under settings s:
// every dialect's and preset's conventional variable, VendorKeyEnv and every provider's
// apiKeyEnv, sorted. It is the one list of them: programs agentd starts inherit none
// (session.Deps.KeyEnvNames, tools.Env.HideEnv).
func (r *Registry) KeyEnvNames(s config.Settings) []string {
	out := slices.Clone(VendorKeyEnv)
	r.mu.Lock()
	for _, d := range r.dialects {
		if d.KeyEnv != "" {
			out = append(out, d.KeyEnv)
		}
		for _, p := range d.Presets {
			if p.KeyEnv != "" {
				out = append(out, p.KeyEnv)
			}
		}
	}
	r.mu.Unlock()
	for _, ps := range s.Providers {
		if ps.APIKeyEnv != "" {
			out = append(out, ps.APIKeyEnv)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Preset returns the preset named id.
func (d Dialect) Preset(id string) (Preset, bool) {
	for _, p := range d.Presets {
		if p.ID == id {
			return p, true
		}
	}
	return Preset{}, false
}
