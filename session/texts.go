package session

import (
	"encoding/json"
	"strings"

	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
)

// texts is the prompt config the manager renders every model-facing text from: the one the
// daemon loaded at start-up (Deps.Prompts), else the built-in set.
func (m *Manager) texts() *prompts.Set {
	if m != nil && m.d.Prompts != nil {
		return m.d.Prompts
	}
	return prompts.Default()
}

// text renders one text of the prompt config.
func (m *Manager) text(path string, run prompts.Run) string { return m.texts().Render(path, run) }

// texts is the turn's prompt config; a turn built bare by a test has the built-in set.
func (t *turn) texts() *prompts.Set {
	if t.s == nil {
		return prompts.Default()
	}
	return t.s.m.texts()
}

// Catalog lists the registry's tools and their arguments, for checking a prompt config's tool
// entries against the tools that exist.
func Catalog(reg *tools.Registry) prompts.Catalog {
	cat := prompts.Catalog{}
	for _, t := range reg.List() {
		cat[t.Name()] = schemaArgs(t.Schema())
	}
	return cat
}

func schemaArgs(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	args := make([]string, 0, len(s.Properties))
	for a := range s.Properties {
		args = append(args, a)
	}
	return args
}

// systemPrompt is the stable prefix of every request: layout.system rendered with the tool
// list. It depends only on the prompt config and the tool set, never on the time, the files or
// the mode, so provider prompt caches hit across turns and sessions; what changes goes in the
// newest user message (layout.context). The manager builds it once (Manager.system).
func systemPrompt(set *prompts.Set, reg *tools.Registry) string {
	var list []map[string]any
	for _, t := range reg.List() {
		desc := t.Description()
		if d, _, ok := set.Tool(t.Name()); ok {
			desc = d
		}
		summary := desc
		if i := strings.IndexByte(summary, '\n'); i >= 0 {
			summary = summary[:i]
		}
		list = append(list, map[string]any{"NAME": t.Name(), "EFFECT": t.Effect().String(), "SUMMARY": summary, "DESCRIPTION": desc})
	}
	return set.Render("layout.system", prompts.Run{"TOOLS": list})
}

// toolSpecs are the registry's specs with the descriptions of the tools and their arguments
// taken from the prompt config. A tool the config does not describe (a test's own tool; the
// daemon checks the real ones at start-up) keeps its built-in text.
func toolSpecs(set *prompts.Set, reg *tools.Registry) []providers.ToolSpec {
	specs := reg.Specs()
	for i, sp := range specs {
		desc, args, ok := set.Tool(sp.Name)
		if !ok {
			continue
		}
		specs[i].Description = desc
		if len(args) == 0 {
			continue
		}
		var schema map[string]any
		if json.Unmarshal(sp.Schema, &schema) != nil {
			continue
		}
		props, _ := schema["properties"].(map[string]any)
		for name, d := range args {
			if p, ok := props[name].(map[string]any); ok {
				p["description"] = d
			}
		}
		if raw, err := json.Marshal(schema); err == nil {
			specs[i].Schema = raw
		}
	}
	return specs
}
