package session

import (
	"strings"
	"sync"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
)

// needsMet says which of the optional tools' needs the settings meet: the web tools need the
// user's web.enabled (web_search also a search provider: webSearch.provider or models.fast's), semantic_search an embedding model.
func needsMet(set config.Settings) func(tools.Need) bool {
	return func(n tools.Need) bool {
		switch n {
		case tools.NeedWeb:
			return set.Web.Enabled
		case tools.NeedWebSearch:
			id, _ := webSearchModel(set, "")
			return id != ""
		case tools.NeedEmbeddings:
			_, ok := set.EmbeddingProvider()
			return ok
		}
		return false
	}
}

// toolVariant is the built-in tool set as one combination of met needs offers it, with what the
// model reads of it (the system prompt's tool list and the declarations), each built once: the
// prompt stays byte-stable for as long as the settings keep the same tools on.
type toolVariant struct {
	reg      *tools.Registry
	system   func() string
	specs    func() []providers.ToolSpec
	toolList func() []map[string]any
}

// variants caches the manager's tool variants by key (the names of the optional tools offered).
type variants struct {
	mu sync.Mutex
	m  map[string]*toolVariant
}

// variant is the tool variant the settings offer.
//
// It runs for every model request (the system prompt, the declarations), so a variant already
// built is found from the needs alone, without building the registry that Offered returns.
func (m *Manager) variant(set config.Settings) *toolVariant {
	has := needsMet(set)
	var key strings.Builder
	for t := range m.d.Tools.All() {
		needs := tools.NeedsOf(t)
		if needs == nil || !allMet(needs, has) {
			continue
		}
		if key.Len() > 0 {
			key.WriteByte(',')
		}
		key.WriteString(t.Name())
	}
	m.variants.mu.Lock()
	v := m.variants.m[key.String()]
	m.variants.mu.Unlock()
	if v != nil {
		return v
	}
	return m.variantOf(m.d.Tools.Offered(has))
}

func allMet(needs []tools.Need, has func(tools.Need) bool) bool {
	for _, n := range needs {
		if !has(n) {
			return false
		}
	}
	return true
}

// variantOf is the variant whose optional tools are the ones reg holds (reg may be a turn's
// snapshot with MCP tools after the built-in ones).
func (m *Manager) variantOf(reg *tools.Registry) *toolVariant {
	var key []string
	for _, t := range m.d.Tools.List() {
		if tools.NeedsOf(t) == nil {
			continue
		}
		if _, ok := reg.Lookup(t.Name()); ok {
			key = append(key, t.Name())
		}
	}
	k := strings.Join(key, ",")
	m.variants.mu.Lock()
	defer m.variants.mu.Unlock()
	if v := m.variants.m[k]; v != nil {
		return v
	}
	has := map[string]bool{}
	for _, n := range key {
		has[n] = true
	}
	base := m.d.Tools
	if len(key) < optionalCount(m.d.Tools) {
		var keep []tools.Tool
		for _, t := range m.d.Tools.List() {
			if tools.NeedsOf(t) == nil || has[t.Name()] {
				keep = append(keep, t)
			}
		}
		base = tools.NewRegistry(keep...)
	}
	v := &toolVariant{reg: base}
	v.system = sync.OnceValue(func() string { return systemPrompt(m.texts(), base) })
	v.toolList = sync.OnceValue(func() []map[string]any { return toolList(m.texts(), base) })
	v.specs = sync.OnceValue(func() []providers.ToolSpec { return toolSpecs(m.texts(), base) })
	if m.variants.m == nil {
		m.variants.m = map[string]*toolVariant{}
	}
	m.variants.m[k] = v
	return v
}

func optionalCount(reg *tools.Registry) int {
	n := 0
	for _, t := range reg.List() {
		if tools.NeedsOf(t) != nil {
			n++
		}
	}
	return n
}
