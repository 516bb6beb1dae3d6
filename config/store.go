package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Layer is one source of settings. Later layers win.
type Layer int

const (
	LayerDefaults Layer = iota
	LayerUser           // $XDG_CONFIG_HOME/agentd/config.json
	LayerProject        // <root>/.agentd/config.json: may only describe or tighten (see Class)
	LayerInit           // initializationOptions.agent.settings
	LayerClient         // workspace/didChangeConfiguration
	LayerSet            // agent/providers/set
	LayerFlags          // command-line flags (--trace)
	numLayers
)

func (l Layer) String() string {
	return [...]string{"defaults", "user config", "project config", "initializationOptions.agent.settings", "workspace/didChangeConfiguration", "agent/providers/set", "command line"}[l]
}

// Defaults returns the built-in settings: the table's defaults as a Settings value, written out
// so that starting agentd needs no JSON (TestNewStoreWithoutJSON holds the two together).
func Defaults() Settings {
	return Settings{
		Provider: "anthropic",
		Providers: map[string]ProviderSettings{
			"anthropic": {APIType: "anthropic", Model: "claude-sonnet-4-5"},
			"openai":    {APIType: "openai", Model: "gpt-5"},
			"ollama":    {APIType: "openai", Model: "qwen2.5-coder"},
			"gemini":    {APIType: "gemini", Model: "gemini-2.5-pro"},
		},
		Mode:                 ModeAsk,
		MaxIterations:        24,
		MaxTokens:            8192,
		Thinking:             Thinking{Enabled: true},
		SaveBeforeRun:        SaveAgentEdits,
		CompactThreshold:     0.8,
		EditorTimeoutSeconds: 60,
		Sandbox:              Sandbox{Mode: SandboxAuto},
		Subagents:            Subagents{MaxConcurrent: 4, MaxIterations: 12, MaxTokens: 200000},
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

// Dialects is what the settings need to know of the provider dialects compiled in, so that a
// provider entry is checked when it is read (apiType known, baseUrl by the endpoint rules), not
// when the first request goes out. providers.Registry implements it; errors are *KeyError
// naming the key within the entry ("baseUrl").
type Dialects interface {
	CheckProvider(id string, p ProviderSettings) error
}

// Store holds the settings layers and their merge. It is safe for concurrent use; Get is what
// the engine calls between turns.
type Store struct {
	mu       sync.RWMutex
	layers   [numLayers]map[string]any
	merged   Settings
	dialects Dialects
	// project is the root whose .agentd/config.json is the project layer ("" for none).
	project string
	// gen counts the changes of the layers, so a Project's merge is computed once per change.
	gen uint64
}

// NewStore returns a store holding the built-in defaults.
//
// It is on the daemon's path to its first answer, so it does no JSON: the defaults layer is
// the table's defaults, and the merge of that one layer is Defaults() itself (both checked by
// TestNewStoreWithoutJSON). Reflecting Settings for encoding/json was ~4 % of the CPU agentd
// spent from start to the initialize answer.
func NewStore() *Store {
	return &Store{layers: [numLayers]map[string]any{LayerDefaults: defaultsLayer()}, merged: Defaults()}
}

// defaultsLayer is the table's defaults as a settings layer: what json.Unmarshal makes of them.
func defaultsLayer() map[string]any {
	m := map[string]any{}
	for _, s := range settings {
		if s.def != nil && !strings.Contains(s.path, ".") {
			m[s.path] = s.def
			if object, ok := s.def.(func() map[string]any); ok {
				m[s.path] = object()
			}
		}
	}
	return m
}

// UseDialects makes the store check every provider entry against the dialects compiled in, now
// and whenever a layer changes. The merge so far must pass.
func (s *Store) UseDialects(d Dialects) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.dialects
	s.dialects = d
	merged, err := s.compute(s.layers)
	if err != nil {
		s.dialects = prev
		return err
	}
	s.merged = merged
	s.gen++
	return nil
}

// Generation counts the changes of the settings: what a caller computed from them (the
// completion engine's resolved provider) is stale once it moves.
func (s *Store) Generation() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.gen
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

// LoadFile reads a layer from a JSON file. A missing file is an empty layer. For LayerProject,
// path is <root>/.agentd/config.json and root is the project whose trust decides what applies.
func (s *Store) LoadFile(l Layer, path string) error {
	read := os.ReadFile
	if l == LayerProject {
		root := filepath.Dir(filepath.Dir(path))
		s.mu.Lock()
		s.project = root
		s.mu.Unlock()
		read = func(path string) ([]byte, error) { return readInProject(root, path) }
	}
	b, err := read(path)
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

// readInProject reads the project file through an os.Root on the project, so a symlink (the file
// or .agentd) that leads outside the project is refused and never read: the repository chose the
// link, and a user file's content (a secrets file, the user's own settings) would reach the
// notice that reports the layer.
func readInProject(root, path string) ([]byte, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := r.ReadFile(rel)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		for p := rel; p != "."; p = filepath.Dir(p) {
			if fi, lerr := r.Lstat(p); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
				return nil, fmt.Errorf("%s leads outside the project through a symlink; it is not applied", path)
			}
		}
	}
	return b, err
}

// Set replaces layer l with the JSON object raw (nil or null clears it). Every layer is checked
// strictly: an unknown key fails with its path and the nearest known key. When the merge does
// not validate, nothing changes and the error names the key. What the project layer may not set
// is left out of the merge and listed in Settings.ProjectNotice.
func (s *Store) Set(l Layer, raw []byte) error {
	m, err := parseLayer(raw)
	if err != nil {
		return err
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
	merged, err := s.compute(layers)
	if err != nil {
		return err
	}
	s.layers, s.merged = layers, merged
	s.gen++
	return nil
}

// parseLayer decodes a settings layer, strictly: an unknown key fails with its path and the
// nearest known key.
func parseLayer(raw []byte) (map[string]any, error) {
	var m map[string]any
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && string(raw) != "null" {
		if raw[0] != '{' {
			return nil, &KeyError{Msg: "settings must be a JSON object"}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return nil, DecodeError(raw, err)
		}
		if err := checkKeys(nil, m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Project is one workspace root's project layer, for the sessions whose cwd that root holds.
// Each session has its own: a project file never stays in force for another project's session.
type Project struct {
	root  string
	layer map[string]any
	// failed says why the file did not load; such a project applies nothing.
	failed string

	mu     sync.Mutex
	gen    uint64
	cached *Settings
}

// Root is the workspace root whose .agentd/config.json this is.
func (p *Project) Root() string { return p.root }

// LoadProject reads root's .agentd/config.json as a project layer. It never fails: a file that
// does not load (not JSON, an unknown key, a directory, a link out of the project, a value the
// merge refuses) applies nothing, and the settings For returns say so in ProjectNotice.
func (s *Store) LoadProject(root string) *Project {
	p := &Project{root: root}
	if root == "" {
		return p
	}
	path := ProjectConfigPath(root)
	b, err := readInProject(root, path)
	if errors.Is(err, os.ErrNotExist) {
		return p
	}
	var m map[string]any
	if err == nil {
		m, err = parseLayer(b)
	}
	if err == nil {
		s.mu.RLock()
		layers := s.layers
		layers[LayerProject] = m
		_, err = s.computeFor(layers, root) // reads s.dialects: under the lock
		s.mu.RUnlock()
	}
	if err != nil {
		p.failed = fmt.Sprintf("%s did not load, so none of it applies: %v", path, err)
		return p
	}
	p.layer = m
	return p
}

// For returns the merged settings with p as the project layer (in place of the store's own
// LayerProject, which the daemon's doors leave empty).
func (s *Store) For(p *Project) Settings {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	gen, layers, merged := s.gen, s.layers, s.merged
	if p.cached == nil || p.gen != gen {
		st := merged
		if p.layer != nil {
			layers[LayerProject] = p.layer
			if got, err := s.computeFor(layers, p.root); err == nil {
				st = got
			} else {
				// The user's layers changed under a project layer that merged before: the
				// project applies nothing until it merges again.
				st.ProjectNotice = fmt.Sprintf("%s no longer merges with your settings, so none of it applies: %v", ProjectConfigPath(p.root), err)
			}
		}
		if p.failed != "" {
			st.ProjectNotice = p.failed
		}
		p.cached, p.gen = &st, gen
	}
	out := *p.cached
	out.Providers = make(map[string]ProviderSettings, len(p.cached.Providers))
	for k, v := range p.cached.Providers {
		out.Providers[k] = v
	}
	return out
}

// compute merges the layers, decodes and validates the result. The project layer is merged
// whole only when its root is in the user's trustedProjects; otherwise only what a project may
// set, against what the user's own layers say.
func (s *Store) compute(layers [numLayers]map[string]any) (Settings, error) {
	return s.computeFor(layers, s.project)
}

// computeFor is compute with root as the project whose file is layers[LayerProject].
func (s *Store) computeFor(layers [numLayers]map[string]any, root string) (Settings, error) {
	project := layers[LayerProject]
	var ignored []string
	if project != nil {
		userOnly := layers
		userOnly[LayerProject] = nil
		trusted, err := decodeMerge(userOnly)
		if err != nil {
			return Settings{}, err
		}
		if !trusts(trusted.TrustedProjects, root) {
			layers[LayerProject], ignored = filterProject(project, trusted, mergeAll(userOnly))
		}
	}
	st, err := decodeMerge(layers)
	if err != nil {
		return Settings{}, err
	}
	if err := validate(st, s.dialects); err != nil {
		return Settings{}, err
	}
	if len(ignored) > 0 {
		st.ProjectNotice = projectNotice(root, ignored)
	}
	if list, ok := layers[LayerProject]["mcpServers"].([]any); ok && !trusts(st.TrustedProjects, root) {
		// A project may ask for MCP servers, which start only once the user approves them: keep
		// them apart from the user's own.
		userOnly := layers
		userOnly[LayerProject] = nil
		user, err := decodeMerge(userOnly)
		if err != nil {
			return Settings{}, err
		}
		st.MCPServers = user.MCPServers
		for _, e := range list {
			if b, err := json.Marshal(e); err == nil {
				st.ProjectMCPServers = append(st.ProjectMCPServers, b)
			}
		}
	}
	return st, nil
}

func mergeAll(layers [numLayers]map[string]any) map[string]any {
	var all map[string]any
	for _, l := range layers {
		all = mergeMaps(all, l)
	}
	return all
}

// decodeMerge is the merge of the layers as Settings. The merge of the defaults alone is
// Defaults() (TestNewStoreWithoutJSON), which is what every start without a settings file
// computes (UseDialects checks the merge against the dialects): it takes no JSON, whose
// per-type encoders and decoders for Settings and a stack grown to 32 KB cost the daemon ~30
// page faults before its first answer.
func decodeMerge(layers [numLayers]map[string]any) (Settings, error) {
	if onlyDefaults(layers) {
		return Defaults(), nil
	}
	return decodeJSON(mergeAll(layers))
}

// onlyDefaults reports whether no layer above the defaults says anything.
func onlyDefaults(layers [numLayers]map[string]any) bool {
	for l, m := range layers {
		if Layer(l) != LayerDefaults && len(m) > 0 {
			return false
		}
	}
	return true
}

// decodeJSON decodes a merged layer into Settings through its JSON.
func decodeJSON(merged map[string]any) (Settings, error) {
	b, err := json.Marshal(merged)
	if err != nil {
		return Settings{}, err
	}
	var st Settings
	if err := json.Unmarshal(b, &st); err != nil {
		return Settings{}, DecodeError(b, err)
	}
	return st, nil
}

// trusts reports whether root is one of the user's trustedProjects.
func trusts(list []string, root string) bool {
	if root == "" {
		return false
	}
	root = filepath.Clean(root)
	real, _ := filepath.EvalSymlinks(root)
	for _, p := range list {
		p = filepath.Clean(p)
		if p == root || p == real {
			return true
		}
	}
	return false
}

// projectNotice tells the user which keys of the project file were ignored and how to allow
// them.
func projectNotice(root string, ignored []string) string {
	return fmt.Sprintf("%s sets %s, which a project may not set (a cloned repository must not loosen safety or decide where code and keys go); agentd ignored them. "+
		"If you trust this project, add %q to \"trustedProjects\" in your user settings (%s).",
		ProjectConfigPath(root), strings.Join(ignored, ", "), root, UserConfigPath())
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

// Validate checks merged settings against the table (without the dialects' endpoint checks);
// the error names the first offending key.
func Validate(s Settings) error { return validate(s, nil) }

func validate(s Settings, d Dialects) error {
	ids := providerIDs(s)
	for _, id := range ids {
		if id == "" {
			return &KeyError{Key: "providers", Msg: "a provider id must not be empty"}
		}
	}
	for _, row := range settings {
		if row.check == nil || row.soft {
			continue
		}
		if strings.HasPrefix(row.path, "providers.*.") {
			for _, id := range ids {
				if err := row.check(s, id); err != nil {
					return err
				}
			}
			continue
		}
		if err := row.check(s, ""); err != nil {
			return err
		}
	}
	if d != nil {
		for _, id := range ids {
			if err := d.CheckProvider(id, s.Providers[id]); err != nil {
				var ke *KeyError
				if errors.As(err, &ke) {
					return &KeyError{Key: "providers." + id + "." + ke.Key, Msg: ke.Msg}
				}
				return &KeyError{Key: "providers." + id, Msg: err.Error()}
			}
		}
	}
	return nil
}

// SoftProblem returns the first failed soft check among the keys under prefix (for example
// "completion."): the feature they configure is off until it is fixed, and the error, naming the
// key, is the user's notice.
func SoftProblem(s Settings, prefix string) error {
	for _, row := range settings {
		if row.soft && row.check != nil && strings.HasPrefix(row.path, prefix) {
			if err := row.check(s, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

type settingsKey struct{}

// WithSettings carries a session's settings (its own project layer merged in) to what resolves
// its provider, so the provider and model a project describes apply to that session only.
func WithSettings(ctx context.Context, st Settings) context.Context {
	return context.WithValue(ctx, settingsKey{}, st)
}

// SettingsFrom returns the settings WithSettings put in ctx.
func SettingsFrom(ctx context.Context) (Settings, bool) {
	st, ok := ctx.Value(settingsKey{}).(Settings)
	return st, ok
}
