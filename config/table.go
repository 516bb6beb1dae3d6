package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Class is how far a settings layer must be trusted to set a key. The user's own layers
// (defaults, the user file, the editor's settings, agent/providers/set, flags) may set anything;
// the project file (<root>/.agentd/config.json, in a repository that may have been cloned from
// anyone) only what describes the project or makes agentd stricter.
type Class uint8

const (
	classNone Class = iota
	// Describe: the project may set it; it describes the project or picks among what the
	// user defined (a model, a provider the user's settings name, compaction, thinking).
	Describe
	// Tighten: the project may set it to a stricter value only (setting.stricter says which).
	Tighten
	// UserOnly: only the user's layers may set it: it decides where code and keys go, what runs
	// without a question, or where agentd writes.
	UserOnly
)

func (c Class) String() string {
	return [...]string{"none", "describe", "tighten", "user-only"}[c]
}

// setting is one key's home: its trust class, default and validation.
type setting struct {
	// path is the dotted key; "*" stands for any map key (a provider id).
	path  string
	class Class
	// def is the built-in default as encoding/json decodes it (nil: none). An object default is
	// a func() map[string]any that builds it: the table is then laid out by the compiler, not
	// built by the package's init at every start, and each store gets maps of its own.
	def any
	// stricter reports, for a Tighten key, whether value v from the project only tightens what
	// the user's layers (trusted) say.
	stricter func(v any, trusted Settings) bool
	// check validates the merged value; id is the provider id for providers.* keys.
	check func(s Settings, id string) error
	// object: the key holds an object whose keys are settings of their own (path + ".").
	object bool
	// soft: a failed check does not refuse the settings; it turns the feature the key belongs
	// to off, and SoftProblem names it for a notice (a side feature such as inline completions
	// must not keep the agent from starting).
	soft bool
}

// builtinProviders are the providers every agentd knows. Where their requests go and which
// variable holds their key are the dialects' to say (providers.Dialect), not the settings'.
func builtinProviders() map[string]any {
	p := func(apiType, model string) map[string]any { return map[string]any{"apiType": apiType, "model": model} }
	return map[string]any{
		"anthropic": p("anthropic", "claude-sonnet-4-5"),
		"openai":    p("openai", "gpt-5"),
		"ollama":    p("openai", "qwen2.5-coder"),
		"gemini":    p("gemini", "gemini-2.5-pro"),
	}
}

// settings is the table: every key of Settings, with its trust class, default and validation.
// TestEverySettingHasATrustClass fails when a field of Settings has no row here.
var settings = append([]setting{
	{path: "provider", class: Describe, def: "anthropic", check: checkProvider},
	{path: "providers", class: Describe, def: builtinProviders, object: true},
	{path: "providers.*", class: Describe, object: true},
	{path: "providers.*.apiType", class: UserOnly, check: func(s Settings, id string) error {
		if s.Providers[id].APIType == "" {
			return &KeyError{Key: "providers." + id + ".apiType", Msg: "required"}
		}
		return nil
	}},
	{path: "providers.*.baseUrl", class: UserOnly},
	{path: "providers.*.model", class: Describe},
	{path: "providers.*.apiKeyEnv", class: UserOnly, check: func(s Settings, id string) error {
		if v := s.Providers[id].APIKeyEnv; v != "" && !envName(v) {
			return &KeyError{Key: "providers." + id + ".apiKeyEnv", Msg: "not an environment variable name"}
		}
		return nil
	}},
	{path: "providers.*.contextWindow", class: Describe, check: func(s Settings, id string) error {
		if s.Providers[id].ContextWindow < 0 {
			return &KeyError{Key: "providers." + id + ".contextWindow", Msg: "must not be negative"}
		}
		return nil
	}},
	// Turning on embeddings sends every text file of the project to the provider in the
	// background: the user's decision, not a cloned repository's.
	{path: "providers.*.embeddingModel", class: UserOnly},
	{path: "providers.*.firstByteTimeout", class: Describe, check: func(s Settings, id string) error {
		if v := s.Providers[id].FirstByteTimeout; v < 0 || v > 24*3600 {
			return &KeyError{Key: "providers." + id + ".firstByteTimeout", Msg: "must be a number of seconds between 0 and 86400"}
		}
		return nil
	}},
	// How the model calls tools and what it can do describe the model. Switching a model to
	// the text protocol loosens, though: there every envelope the model writes may run,
	// one it merely quotes from a README included, so a project may pick native tools or none,
	// and may not turn a model's native tools off (toolCalling "text", capabilities.tools false).
	{path: "providers.*.toolCalling", class: Tighten,
		stricter: func(v any, _ Settings) bool { return v == ToolCallingNative || v == ToolCallingNone },
		check: func(s Settings, id string) error {
			switch s.Providers[id].ToolCalling {
			case "", ToolCallingNative, ToolCallingText, ToolCallingNone:
				return nil
			}
			return &KeyError{Key: "providers." + id + ".toolCalling", Msg: fmt.Sprintf("%q is not one of \"native\", \"text\", \"none\"", s.Providers[id].ToolCalling)}
		}},
	// What the server is sent, like its base URL, is the user's to say.
	{path: "providers.*.outputSchema", class: UserOnly, check: func(s Settings, id string) error {
		switch s.Providers[id].OutputSchema {
		case "", "json_schema", "response_format", "off":
			return nil
		}
		return &KeyError{Key: "providers." + id + ".outputSchema", Msg: fmt.Sprintf("%q is not one of \"json_schema\", \"response_format\", \"off\"", s.Providers[id].OutputSchema)}
	}},
	{path: "providers.*.capabilities", class: Describe, object: true},
	{path: "providers.*.capabilities.tools", class: Tighten, stricter: func(v any, _ Settings) bool { return v == true }},
	{path: "providers.*.capabilities.images", class: Describe},
	{path: "providers.*.capabilities.thinking", class: Describe},
	{path: "providers.*.capabilities.contextWindow", class: Describe, check: func(s Settings, id string) error {
		if c := s.Providers[id].Capabilities; c != nil && c.ContextWindow < 0 {
			return &KeyError{Key: "providers." + id + ".capabilities.contextWindow", Msg: "must not be negative"}
		}
		return nil
	}},
	{path: "mode", class: Tighten, def: ModeAsk,
		stricter: func(v any, _ Settings) bool { return v == ModeAsk || v == ModePlan },
		check: func(s Settings, _ string) error {
			if ValidMode(s.Mode) {
				return nil
			}
			return &KeyError{Key: "mode", Msg: fmt.Sprintf("%q is not one of %s", s.Mode, strings.Join(Modes, ", "))}
		}},
	{path: "maxIterations", class: Tighten, def: float64(24),
		stricter: func(v any, t Settings) bool { return number(v) <= float64(t.MaxIterations) },
		check:    func(s Settings, _ string) error { return positive("maxIterations", s.MaxIterations) }},
	{path: "maxTokens", class: Tighten, def: float64(8192),
		stricter: func(v any, t Settings) bool { return number(v) <= float64(t.MaxTokens) },
		check:    func(s Settings, _ string) error { return positive("maxTokens", s.MaxTokens) }},
	{path: "thinking", class: Describe, def: func() map[string]any { return map[string]any{"enabled": true, "budgetTokens": nil} }, object: true},
	{path: "thinking.enabled", class: Describe},
	{path: "thinking.budgetTokens", class: Describe, check: func(s Settings, _ string) error {
		if s.Thinking.BudgetTokens != nil && *s.Thinking.BudgetTokens < 0 {
			return &KeyError{Key: "thinking.budgetTokens", Msg: "must not be negative"}
		}
		return nil
	}},
	{path: "saveBeforeRun", class: Tighten, def: string(SaveAgentEdits),
		// The project may ask for the default only: false runs programs on stale files, and
		// "all" saves the user's own changes.
		stricter: func(v any, _ Settings) bool { return v == true || v == string(SaveAgentEdits) },
		check: func(s Settings, _ string) error {
			switch s.SaveBeforeRun {
			case SaveNone, SaveAgentEdits, SaveAll:
				return nil
			}
			return &KeyError{Key: "saveBeforeRun", Msg: fmt.Sprintf("%q is not one of \"agentEdits\", \"all\", false", string(s.SaveBeforeRun))}
		}},
	{path: "allowShell", class: Tighten, def: false,
		stricter: func(v any, _ Settings) bool { return v == false }},
	// The web tools send what the model writes (a URL, a query) off the machine: only the user
	// turns them on; a project may turn them off.
	{path: "web", class: Describe, def: func() map[string]any { return map[string]any{"enabled": false} }, object: true},
	{path: "web.enabled", class: Tighten, stricter: func(v any, _ Settings) bool { return v == false }},
	{path: "webSearch", class: UserOnly, def: func() map[string]any { return map[string]any{} }, object: true},
	{path: "webSearch.provider", class: UserOnly, check: func(s Settings, _ string) error {
		if p := s.WebSearch.Provider; p != "" {
			if _, ok := s.Providers[p]; !ok {
				return &KeyError{Key: "webSearch.provider", Msg: fmt.Sprintf("%q is not one of providers (%s)", p, strings.Join(providerIDs(s), ", "))}
			}
		}
		return nil
	}},
	{path: "completion", class: UserOnly, def: func() map[string]any { return map[string]any{} }, object: true},
	{path: "completion.provider", class: UserOnly, soft: true, check: func(s Settings, _ string) error {
		if p := s.Completion.Provider; p != "" {
			if _, ok := s.Providers[p]; !ok {
				return &KeyError{Key: "completion.provider", Msg: fmt.Sprintf("%q is not one of providers (%s)", p, strings.Join(providerIDs(s), ", "))}
			}
		}
		return nil
	}},
	{path: "completion.model", class: UserOnly},
	{path: "completion.endpoint", class: UserOnly, soft: true, check: func(s Settings, _ string) error {
		switch s.Completion.Endpoint {
		case "", "completions", "infill", "fim", "chat":
			return nil
		}
		return &KeyError{Key: "completion.endpoint", Msg: fmt.Sprintf("%q is not one of completions, infill, fim, chat", s.Completion.Endpoint)}
	}},
	{path: "completion.maxTokens", class: UserOnly, soft: true, check: func(s Settings, _ string) error {
		if n := s.Completion.MaxTokens; n < 0 || n > 4096 {
			return &KeyError{Key: "completion.maxTokens", Msg: "must be between 1 and 4096"}
		}
		return nil
	}},
	{path: "completion.contextChars", class: UserOnly, soft: true, check: func(s Settings, _ string) error {
		if n := s.Completion.ContextChars; n < 0 || n > 1<<20 {
			return &KeyError{Key: "completion.contextChars", Msg: "must be between 1 and 1048576"}
		}
		return nil
	}},
	{path: "transcription", class: UserOnly, def: func() map[string]any { return map[string]any{} }, object: true},
	{path: "transcription.provider", class: UserOnly, check: func(s Settings, _ string) error {
		if p := s.Transcription.Provider; p != "" {
			if _, ok := s.Providers[p]; !ok {
				return &KeyError{Key: "transcription.provider", Msg: fmt.Sprintf("%q is not one of providers (%s)", p, strings.Join(providerIDs(s), ", "))}
			}
		}
		return nil
	}},
	{path: "transcription.model", class: UserOnly},
	// A project may lower the subagents' bounds, never raise them: each child spends the user's
	// tokens.
	{path: "subagents", class: Describe, def: func() map[string]any {
		return map[string]any{"maxConcurrent": float64(4), "maxIterations": float64(12), "maxTokens": float64(200000)}
	}, object: true},
	{path: "subagents.maxConcurrent", class: Tighten,
		stricter: func(v any, t Settings) bool { return number(v) <= float64(t.Subagents.MaxConcurrent) },
		check: func(s Settings, _ string) error {
			return positive("subagents.maxConcurrent", s.Subagents.MaxConcurrent)
		}},
	{path: "subagents.maxIterations", class: Tighten,
		stricter: func(v any, t Settings) bool { return number(v) <= float64(t.Subagents.MaxIterations) },
		check: func(s Settings, _ string) error {
			return positive("subagents.maxIterations", s.Subagents.MaxIterations)
		}},
	{path: "subagents.maxTokens", class: Tighten,
		stricter: func(v any, t Settings) bool { return number(v) <= float64(t.Subagents.MaxTokens) },
		check:    func(s Settings, _ string) error { return positive("subagents.maxTokens", s.Subagents.MaxTokens) }},
	{path: "compactThreshold", class: Describe, def: 0.8, check: func(s Settings, _ string) error {
		if s.CompactThreshold <= 0 || s.CompactThreshold >= 1 {
			return &KeyError{Key: "compactThreshold", Msg: "must be between 0 and 1"}
		}
		return nil
	}},
	// How long agentd waits for the editor's answers: a robustness knob, not a safety one.
	{path: "editorTimeoutSeconds", class: Describe, def: float64(60),
		check: func(s Settings, _ string) error {
			if s.EditorTimeoutSeconds < 0 {
				return &KeyError{Key: "editorTimeoutSeconds", Msg: "must not be negative"}
			}
			return nil
		}},
	{path: "trace", class: UserOnly},
	// A second request per answer holding code costs the user's money and time: theirs to choose.
	{path: "answerReview", class: UserOnly, def: false},
	{path: "mcpServers", class: Describe},
	// Hooks run programs at every tool call or prompt: a project file that sets them would run
	// a cloned repository's code unasked.
	{path: "hooks", class: UserOnly, def: func() map[string]any { return map[string]any{} }, object: true, check: checkHooks},
	{path: "hooks.beforeTool", class: UserOnly},
	{path: "hooks.afterTool", class: UserOnly},
	{path: "hooks.promptSubmit", class: UserOnly},
	{path: "hooks.stop", class: UserOnly},
	{path: "hooks.sessionStart", class: UserOnly},
	// A price only describes a model, but a project file that set one could hide what the
	// user's session costs (a price of 0) or make it look alarming: the user's own layers and
	// the built-in table say what a model costs, never a cloned repository.
	{path: "models", class: UserOnly, object: true},
	{path: "models.*", class: UserOnly, object: true},
	{path: "models.*.price", class: UserOnly, object: true},
	{path: "models.*.price.input", class: UserOnly, check: checkPrices},
	{path: "models.*.price.output", class: UserOnly},
	{path: "models.*.price.cacheRead", class: UserOnly},
	{path: "models.*.price.cacheWrite", class: UserOnly},
	{path: "models.*.price.currency", class: UserOnly},
	// Which model gets the side requests sends the conversation to it, at its price: the user's
	// choice, like webSearch.provider. It is the models entry "fast" (config.FastModelKey).
	{path: "models.*.provider", class: UserOnly, check: func(s Settings, _ string) error {
		if p := s.Fast().Provider; p != "" {
			if _, ok := s.Providers[p]; !ok {
				return &KeyError{Key: "models.fast.provider", Msg: fmt.Sprintf("%q is not one of providers (%s)", p, strings.Join(providerIDs(s), ", "))}
			}
		}
		return nil
	}},
	{path: "models.*.model", class: UserOnly},
	{path: "trustedProjects", class: UserOnly, check: func(s Settings, _ string) error {
		for i, p := range s.TrustedProjects {
			if !filepath.IsAbs(p) {
				return &KeyError{Key: fmt.Sprintf("trustedProjects[%d]", i), Msg: fmt.Sprintf("%q is not an absolute path", p)}
			}
		}
		return nil
	}},
}, sandboxRows()...)

// checkPrices validates every model's price: amounts are finite and not negative, the currency
// is an ISO 4217 code (three capital letters) when set.
func checkPrices(s Settings, _ string) error {
	ids := make([]string, 0, len(s.Models))
	for id := range s.Models {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := s.Models[id].Price
		if p == nil {
			continue
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"input", p.Input}, {"output", p.Output}, {"cacheRead", orZero(p.CacheRead)}, {"cacheWrite", orZero(p.CacheWrite)}} {
			if !(f.v >= 0 && f.v < 1e9) {
				return &KeyError{Key: "models." + id + ".price." + f.name, Msg: "must be a price per million tokens, at least 0"}
			}
		}
		if c := p.Currency; c != "" && !currencyCode(c) {
			return &KeyError{Key: "models." + id + ".price.currency", Msg: fmt.Sprintf("%q is not an ISO 4217 currency code such as \"USD\"", c)}
		}
	}
	return nil
}

func checkHooks(s Settings, _ string) error {
	for _, ev := range []string{"beforeTool", "afterTool", "promptSubmit", "stop", "sessionStart"} {
		for i, h := range s.Hooks.Events()[ev] {
			key := fmt.Sprintf("hooks.%s[%d]", ev, i)
			if len(h.Command) == 0 || h.Command[0] == "" {
				return &KeyError{Key: key + ".command", Msg: "required: the program and its arguments, as a list"}
			}
			if h.TimeoutMs < 0 {
				return &KeyError{Key: key + ".timeoutMs", Msg: "must not be negative"}
			}
			if h.Match != "" {
				if _, err := regexp.Compile(h.Match); err != nil {
					return &KeyError{Key: key + ".match", Msg: "not a regular expression: " + err.Error()}
				}
			}
		}
	}
	return nil
}

func orZero(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

func currencyCode(c string) bool {
	if len(c) != 3 {
		return false
	}
	for _, r := range c {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

func checkProvider(s Settings, _ string) error {
	if s.Provider == "" {
		return nil
	}
	if _, ok := s.Providers[s.Provider]; !ok {
		return &KeyError{Key: "provider", Msg: fmt.Sprintf("%q is not one of providers (%s)", s.Provider, strings.Join(providerIDs(s), ", "))}
	}
	return nil
}

func providerIDs(s Settings) []string {
	ids := make([]string, 0, len(s.Providers))
	for id := range s.Providers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// positive is the check of a key whose value v must be positive.
func positive(key string, v int) error {
	if v <= 0 {
		return &KeyError{Key: key, Msg: "must be positive"}
	}
	return nil
}

// number reads a JSON number as decoded with UseNumber or not; NaN-like garbage counts as huge,
// so a value that is not a number never passes as "stricter".
func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case interface{ Float64() (float64, error) }:
		if f, err := n.Float64(); err == nil {
			return f
		}
	}
	return 1e308
}

// rowParts is each row's path split at its dots, worked out once, at first use.
func rowParts() [][]string {
	splitRows.once.Do(func() {
		splitRows.parts = make([][]string, len(settings))
		for i, s := range settings {
			splitRows.parts[i] = strings.Split(s.path, ".")
		}
	})
	return splitRows.parts
}

// splitRows holds rowParts' result: a sync.Once in a zero variable costs the package's init
// nothing, where a package-level sync.OnceValue is a call at every start.
var splitRows struct {
	once  sync.Once
	parts [][]string
}

// lookup returns the row for the dotted path of keys (provider ids match "*").
func lookup(keys []string) (setting, bool) {
	for i, parts := range rowParts() {
		if len(parts) != len(keys) {
			continue
		}
		ok := true
		for j, p := range parts {
			if p != "*" && p != keys[j] {
				ok = false
				break
			}
		}
		if ok {
			return settings[i], true
		}
	}
	return setting{}, false
}

// children lists the keys a settings object at path (the rows' spelling, "providers.*") holds.
func children(path string) []string {
	var out []string
	prefix := path + "."
	if path == "" {
		prefix = ""
	}
	for _, s := range settings {
		if rest, ok := strings.CutPrefix(s.path, prefix); ok && !strings.Contains(rest, ".") && rest != "*" {
			out = append(out, rest)
		}
	}
	return out
}

// rowPath is the table's spelling of a concrete path: provider ids become "*".
func rowPath(keys []string) string {
	out := make([]string, len(keys))
	copy(out, keys)
	if len(out) >= 2 && (out[0] == "providers" || out[0] == "models") {
		out[1] = "*"
	}
	return strings.Join(out, ".")
}

// checkKeys fails on the first key of m (sorted, depth first) that is not a setting, naming
// its path and the nearest known key.
func checkKeys(prefix []string, m map[string]any) error {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	path := append(prefix, "")
	for _, k := range names {
		path[len(path)-1] = k
		row, ok := lookup(path)
		if !ok {
			msg := "unknown key"
			if near := nearest(k, children(rowPath(prefix))); near != "" {
				msg += " (did you mean " + near + "?)"
			}
			return &KeyError{Key: strings.Join(path, "."), Msg: msg}
		}
		if !row.object || m[k] == nil {
			continue
		}
		sub, isObj := m[k].(map[string]any)
		if !isObj {
			return &KeyError{Key: strings.Join(path, "."), Msg: "expected object"}
		}
		if err := checkKeys(path[:len(path):len(path)], sub); err != nil {
			return err
		}
	}
	return nil
}

// nearest is the known key closest to k: the same letters ignoring case and _ or -, else an
// edit distance of at most a third of its length.
func nearest(k string, known []string) string {
	fold := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	best, bestD := "", 1<<30
	for _, c := range known {
		if fold(c) == fold(k) {
			return c
		}
		if d := distance(strings.ToLower(k), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= max(2, len(k)/3) {
		return best
	}
	return ""
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// filterProject returns the part of a project layer a project may set, and the keys it may not
// (sorted), judged against what the user's own layers say (trusted, and trustedRaw, their merge
// as JSON values). A value the user's layers already have changes nothing and is not reported:
// a project file that repeats a provider's apiType is no attack.
func filterProject(m map[string]any, trusted Settings, trustedRaw map[string]any) (map[string]any, []string) {
	var ignored []string
	var walk func(prefix []string, m map[string]any) map[string]any
	walk = func(prefix []string, m map[string]any) map[string]any {
		out := make(map[string]any, len(m))
		for k, v := range m {
			path := append(append([]string{}, prefix...), k)
			name := strings.Join(path, ".")
			row, _ := lookup(path) // checkKeys has run: every key has a row
			switch {
			case v == nil:
				out[k] = v
			case !row.object && sameValue(v, valueAt(trustedRaw, path)):
				out[k] = v
			case len(path) == 2 && path[0] == "providers":
				if _, ok := trusted.Providers[k]; !ok {
					ignored = append(ignored, name) // a new provider: where code goes is the user's to say
					continue
				}
				if sub, ok := v.(map[string]any); ok {
					out[k] = walk(path, sub)
				}
			case row.object:
				if sub, ok := v.(map[string]any); ok {
					kept := walk(path, sub)
					// A user-only object the project left empty (or gave nothing the user may
					// take from it) is not kept: an empty models.<id>.price would be a price of 0.
					if len(kept) == 0 && row.class == UserOnly {
						if len(sub) == 0 {
							ignored = append(ignored, name)
						}
						continue
					}
					out[k] = kept
				}
			case row.class == Describe:
				if name == "provider" {
					if _, ok := trusted.Providers[fmt.Sprint(v)]; !ok {
						ignored = append(ignored, name)
						continue
					}
				}
				out[k] = v
			case row.class == Tighten && row.stricter(v, trusted):
				out[k] = v
			default:
				ignored = append(ignored, name)
			}
		}
		return out
	}
	kept := walk(nil, m)
	sort.Strings(ignored)
	return kept, ignored
}

// valueAt is the JSON value at path in m (nil when absent).
func valueAt(m map[string]any, path []string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// sameValue compares two decoded JSON values, a json.Number and a float64 of one number alike.
func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return false
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return false
	}
	if n, ok := a.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			ja, _ = json.Marshal(f)
		}
	}
	if n, ok := b.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			jb, _ = json.Marshal(f)
		}
	}
	return string(ja) == string(jb)
}
