package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Layer is one source of settings. Later layers win.
type Layer int

const (
	LayerDefaults Layer = iota
	LayerUser           // $XDG_CONFIG_HOME/agentd/config.json
	LayerProject        // <root>/.agentd/config.json: never trusted with secrets
	LayerInit           // initializationOptions.agent.settings
	LayerClient         // workspace/didChangeConfiguration
	LayerSet            // agent/providers/set
	LayerFlags          // command-line flags (--trace)
	numLayers
)

func (l Layer) String() string {
	return [...]string{"defaults", "user config", "project config", "initializationOptions.agent.settings", "workspace/didChangeConfiguration", "agent/providers/set", "command line"}[l]
}

// Default base URLs per apiType: what each vendor's own SDK uses.
var defaultBaseURLs = map[string]string{
	"anthropic": "https://api.anthropic.com",
	"openai":    "https://api.openai.com/v1",
	"gemini":    "https://generativelanguage.googleapis.com",
}

// DefaultBaseURL is the base URL of apiType when the settings name none ("" if unknown).
func DefaultBaseURL(apiType string) string { return defaultBaseURLs[apiType] }

// Defaults returns the built-in settings.
func Defaults() Settings {
	return Settings{
		Provider: "anthropic",
		Providers: map[string]ProviderSettings{
			"anthropic": {APIType: "anthropic", Model: "claude-sonnet-4-5"},
			"openai":    {APIType: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-5"},
			"ollama":    {APIType: "openai", BaseURL: "http://localhost:11434/v1", Model: "qwen2.5-coder"},
			"gemini":    {APIType: "gemini", Model: "gemini-2.5-pro"},
		},
		Mode:             "ask",
		MaxIterations:    24,
		MaxTokens:        8192,
		Thinking:         Thinking{Enabled: true},
		SaveBeforeRun:    true,
		CompactThreshold: 0.8,
	}
}

// UserConfigPath is $XDG_CONFIG_HOME/agentd/config.json (~/.config/agentd/config.json).
func UserConfigPath() string { return filepath.Join(ConfigDir(), "config.json") }

// ConfigDir is $XDG_CONFIG_HOME/agentd.
func ConfigDir() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "agentd")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config", "agentd")
	}
	return filepath.Join(os.TempDir(), "agentd-config")
}

// StateDir is $XDG_STATE_HOME/agentd (~/.local/state/agentd).
func StateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "agentd")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "agentd")
	}
	return filepath.Join(os.TempDir(), "agentd-state")
}

// ProjectConfigPath is <root>/.agentd/config.json.
func ProjectConfigPath(root string) string { return filepath.Join(root, ".agentd", "config.json") }

// Store holds the settings layers and their merge. It is safe for concurrent use; Get is what
// the engine calls between turns.
type Store struct {
	mu     sync.RWMutex
	layers [numLayers]map[string]any
	merged Settings
	// untrusted lists the providers whose base URL comes from the project file and points to
	// an origin no trusted layer chose: their environment keys must not be sent there.
	untrusted map[string]bool
}

// NewStore returns a store holding the built-in defaults.
//
// It is on the daemon's path to its first answer, so it does no JSON: the defaults layer is
// written out as the map json.Marshal(Defaults()) decodes to, and the merge of that one layer is
// Defaults() itself (both checked by TestNewStoreWithoutJSON). Reflecting Settings for
// encoding/json was ~4 % of the CPU agentd spent from start to the initialize answer.
func NewStore() *Store {
	return &Store{layers: [numLayers]map[string]any{LayerDefaults: defaultsLayer()}, merged: Defaults(), untrusted: map[string]bool{}}
}

// defaultsLayer is Defaults() as a settings layer: what json.Unmarshal makes of its JSON.
func defaultsLayer() map[string]any {
	provider := func(apiType, baseURL, model string) map[string]any {
		p := map[string]any{"apiType": apiType, "model": model}
		if baseURL != "" {
			p["baseUrl"] = baseURL
		}
		return p
	}
	return map[string]any{
		"provider": "anthropic",
		"providers": map[string]any{
			"anthropic": provider("anthropic", "", "claude-sonnet-4-5"),
			"openai":    provider("openai", "https://api.openai.com/v1", "gpt-5"),
			"ollama":    provider("openai", "http://localhost:11434/v1", "qwen2.5-coder"),
			"gemini":    provider("gemini", "", "gemini-2.5-pro"),
		},
		"mode":             "ask",
		"maxIterations":    float64(24),
		"maxTokens":        float64(8192),
		"thinking":         map[string]any{"enabled": true, "budgetTokens": nil},
		"saveBeforeRun":    true,
		"allowShell":       false,
		"compactThreshold": 0.8,
	}
}

// Get returns the merged settings (a copy the caller may keep).
func (s *Store) Get() Settings {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := s.merged
	out.Providers = make(map[string]ProviderSettings, len(s.merged.Providers))
	for k, v := range s.merged.Providers {
		out.Providers[k] = v
	}
	return out
}

// BaseURLTrusted reports whether the base URL of provider id was chosen by the user (defaults,
// user file, client settings) rather than only by the project file. Keys from the environment
// go only to a trusted base URL.
func (s *Store) BaseURLTrusted(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return !s.untrusted[id]
}

// LoadFile reads a layer from a JSON file. A missing file is an empty layer.
func (s *Store) LoadFile(l Layer, path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s.Set(l, nil)
	}
	if err != nil {
		return err
	}
	if err := s.Set(l, b); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Set replaces layer l with the JSON object raw (nil or null clears it). When the merge does not
// validate, nothing changes and the error names the key. For the project layer, keys that could
// carry or redirect secrets are dropped and reported in the returned error while the rest of
// the layer still applies (check with errors.As for *ForbiddenKeysError).
func (s *Store) Set(l Layer, raw []byte) error {
	var m map[string]any
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && string(raw) != "null" {
		if raw[0] != '{' {
			return &KeyError{Msg: "settings must be a JSON object"}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return DecodeError(raw, err)
		}
	}
	var forbidden *ForbiddenKeysError
	if l == LayerProject {
		if keys := stripSecrets(m); len(keys) > 0 {
			forbidden = &ForbiddenKeysError{Keys: keys}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m == nil && s.layers[l] == nil {
		// Clearing an empty layer (a settings file that does not exist, as at every start
		// without one) changes nothing: the merge stays the one already validated.
		return nil
	}
	layers := s.layers
	layers[l] = m
	merged, untrusted, err := s.compute(layers)
	if err != nil {
		return err
	}
	s.layers, s.merged, s.untrusted = layers, merged, untrusted
	if forbidden != nil {
		return forbidden
	}
	return nil
}

// ForbiddenKeysError lists keys a project file may not set.
type ForbiddenKeysError struct{ Keys []string }

func (e *ForbiddenKeysError) Error() string {
	return strings.Join(e.Keys, ", ") + ": not allowed in a project file (API keys and where they are read from are never taken from a project); ignored"
}

// stripSecrets removes from a project layer every key that holds a secret or decides which
// secret is sent: apiKey, apiKeyEnv and headers of a provider, and anything named like a key.
func stripSecrets(m map[string]any) []string {
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			lk := strings.ToLower(k)
			if lk == "apikey" || lk == "apikeyenv" || lk == "headers" || lk == "authorization" || strings.Contains(lk, "token") && !strings.Contains(lk, "tokens") || strings.Contains(lk, "secret") || strings.Contains(lk, "password") {
				out = append(out, key)
				delete(m, k)
				continue
			}
			if sub, ok := v.(map[string]any); ok {
				walk(key, sub)
			}
		}
	}
	walk("", m)
	sort.Strings(out)
	return out
}

// compute merges the layers, decodes and validates the result.
func (s *Store) compute(layers [numLayers]map[string]any) (Settings, map[string]bool, error) {
	merge := func(skip Layer) (map[string]any, error) {
		var acc map[string]any
		for i, l := range layers {
			if Layer(i) == skip {
				continue
			}
			acc = mergeMaps(acc, l)
		}
		return acc, nil
	}
	all, _ := merge(-1)
	b, err := json.Marshal(all)
	if err != nil {
		return Settings{}, nil, err
	}
	var st Settings
	if err := json.Unmarshal(b, &st); err != nil {
		return Settings{}, nil, DecodeError(b, err)
	}
	if err := Validate(st); err != nil {
		return Settings{}, nil, err
	}
	untrusted := map[string]bool{}
	if p := layers[LayerProject]; p != nil {
		trusted, _ := merge(LayerProject)
		tb, _ := json.Marshal(trusted)
		var ts Settings
		_ = json.Unmarshal(tb, &ts)
		for id, ps := range st.Providers {
			eff := originOf(ps.EffectiveBaseURL())
			if eff == originOf(DefaultBaseURL(ps.APIType)) {
				continue
			}
			if tps, ok := ts.Providers[id]; ok && originOf(tps.EffectiveBaseURL()) == eff {
				continue
			}
			untrusted[id] = true
		}
	}
	return st, untrusted, nil
}

// EffectiveBaseURL is the base URL the provider's requests go to: its own, else its apiType's
// default ("" when the apiType has none).
func (p ProviderSettings) EffectiveBaseURL() string {
	if p.BaseURL != "" {
		return p.BaseURL
	}
	return DefaultBaseURL(p.APIType)
}

func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// mergeMaps overlays top on base: objects merge key by key, anything else replaces, and an
// explicit null sets nothing, so the lower layers show through.
func mergeMaps(base, top map[string]any) map[string]any {
	if top == nil {
		return base
	}
	out := make(map[string]any, len(base)+len(top))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range top {
		if v == nil {
			continue
		}
		if tm, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(bm, tm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// envName reports whether s is an environment variable name: ^[A-Za-z_][A-Za-z0-9_]*$, checked
// by hand because a regular expression compiled at package init cost every start of the daemon.
func envName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return s != ""
}

// Validate checks the merged settings; the error names the first offending key.
func Validate(s Settings) error {
	ids := make([]string, 0, len(s.Providers))
	for id := range s.Providers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := s.Providers[id]
		key := "providers." + id
		if id == "" {
			return &KeyError{Key: "providers", Msg: "a provider id must not be empty"}
		}
		if p.APIType == "" {
			return &KeyError{Key: key + ".apiType", Msg: "required"}
		}
		if p.APIType == "replay" && p.BaseURL != "" {
			// A replay script is a local file: a path or a file:// URL, never a network origin.
			if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "" && u.Scheme != "file") {
				return &KeyError{Key: key + ".baseUrl", Msg: "a replay script must be a file path or a file:// URL"}
			}
		} else if p.BaseURL != "" {
			u, err := url.Parse(p.BaseURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return &KeyError{Key: key + ".baseUrl", Msg: "not a URL"}
			}
		} else if DefaultBaseURL(p.APIType) == "" && p.APIType != "replay" {
			return &KeyError{Key: key + ".baseUrl", Msg: fmt.Sprintf("required for apiType %q", p.APIType)}
		}
		if p.APIKeyEnv != "" && !envName(p.APIKeyEnv) {
			return &KeyError{Key: key + ".apiKeyEnv", Msg: "not an environment variable name"}
		}
		if p.ContextWindow < 0 {
			return &KeyError{Key: key + ".contextWindow", Msg: "must not be negative"}
		}
	}
	if s.Provider != "" {
		if _, ok := s.Providers[s.Provider]; !ok {
			return &KeyError{Key: "provider", Msg: fmt.Sprintf("%q is not one of providers (%s)", s.Provider, strings.Join(ids, ", "))}
		}
	}
	switch s.Mode {
	case "ask", "auto", "plan":
	default:
		return &KeyError{Key: "mode", Msg: fmt.Sprintf("%q is not one of ask, auto, plan", s.Mode)}
	}
	if s.MaxIterations <= 0 {
		return &KeyError{Key: "maxIterations", Msg: "must be positive"}
	}
	if s.MaxTokens <= 0 {
		return &KeyError{Key: "maxTokens", Msg: "must be positive"}
	}
	if s.Thinking.BudgetTokens != nil && *s.Thinking.BudgetTokens < 0 {
		return &KeyError{Key: "thinking.budgetTokens", Msg: "must not be negative"}
	}
	if s.CompactThreshold <= 0 || s.CompactThreshold >= 1 {
		return &KeyError{Key: "compactThreshold", Msg: "must be between 0 and 1"}
	}
	return nil
}
