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

// Catalog lists the registry's tools and their arguments, and respond's, for checking a prompt
// config's tool entries against the tools that exist. A member of an argument that is an object
// or a list of objects is listed as ARGUMENT.MEMBER.
func Catalog(reg *tools.Registry) prompts.Catalog {
	cat := prompts.Catalog{}
	for _, t := range reg.List() {
		cat[t.Name()] = schemaArgs(t.Schema())
	}
	// respond is the text tool-call protocol's own (session/textmode.go), no registry tool.
	cat[respondTool] = schemaArgs(json.RawMessage(respondSchema))
	return cat
}

// schemaProp is the part of a JSON schema property the descriptions are placed by.
type schemaProp struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Items      *schemaProp                `json:"items"`
}

func schemaArgs(schema json.RawMessage) []string {
	var s schemaProp
	_ = json.Unmarshal(schema, &s)
	args := make([]string, 0, len(s.Properties))
	for a, raw := range s.Properties {
		args = append(args, a)
		var p schemaProp
		_ = json.Unmarshal(raw, &p)
		if p.Items != nil {
			p = *p.Items
		}
		for f := range p.Properties {
			args = append(args, a+"."+f)
		}
	}
	return args
}

// systemPrompt is the stable prefix of every request: layout.system rendered with the tool
// list. It depends only on the prompt config and the tool set, never on the time, the files or
// the mode, so provider prompt caches hit across turns and sessions; what changes goes in the
// newest user message (layout.context). The manager builds it once (Manager.system).
func systemPrompt(set *prompts.Set, reg *tools.Registry) string {
	return set.Render("layout.system", prompts.Run{"TOOLS": toolList(set, reg)})
}

// systemWith is the system prompt rendered with more run values (a session's instructions).
func (m *Manager) systemWith(run prompts.Run) string {
	run["TOOLS"] = m.toolList()
	return m.texts().Render("layout.system", run)
}

// toolList is the TOOLS run value: each tool's name, effect and description.
func toolList(set *prompts.Set, reg *tools.Registry) []map[string]any {
	var list []map[string]any
	for _, t := range reg.List() {
		desc := t.Description()
		if d, ok := set.ToolDescription(t.Name()); ok {
			desc = d
		}
		summary := desc
		if i := strings.IndexByte(summary, '\n'); i >= 0 {
			summary = summary[:i]
		}
		list = append(list, map[string]any{"NAME": t.Name(), "EFFECT": t.Effect().String(), "SUMMARY": summary, "DESCRIPTION": desc})
	}
	return list
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
			if p := schemaMember(props, name); p != nil {
				p["description"] = d
			}
		}
		if raw, err := json.Marshal(schema); err == nil {
			specs[i].Schema = raw
		}
	}
	return specs
}

// schemaMember finds the property an argument name (ARGUMENT or ARGUMENT.MEMBER) denotes in a
// schema's properties; a member is looked for in the argument's own properties or, for a list,
// its items'.
func schemaMember(props map[string]any, name string) map[string]any {
	arg, member, nested := strings.Cut(name, ".")
	p, _ := props[arg].(map[string]any)
	if !nested || p == nil {
		return p
	}
	if items, ok := p["items"].(map[string]any); ok {
		p = items
	}
	sub, _ := p["properties"].(map[string]any)
	m, _ := sub[member].(map[string]any)
	return m
}

// contextNote is the live context as it was put in the user message at index at.
type contextNote struct {
	at   int
	text string
}

// placeContext puts the live context (layout.context: mode, roots, unsaved files, diagnostics,
// the time) in the newest user message, as a reminder, instead of in the system prompt: the
// system prompt and the tools then stay byte-stable for the whole session and the history in
// front of the newest message is never rewritten, so the providers' prompt caches keep the
// whole conversation prefix. A reminder once placed stays at its message in every later
// request (the model sees the older ones, the newest last); a new one is placed only when the
// context changed.
func (t *turn) placeContext(msgs []providers.Message) []providers.Message {
	s := t.s
	s.mu.Lock()
	out, notes := placeContext(s.contextNotes, msgs, t.live)
	s.contextNotes = notes
	s.mu.Unlock()
	return out
}

// placeContext is placeContext's pure part: it returns the messages with every reminder in
// place and the notes as they now are.
func placeContext(notes []contextNote, msgs []providers.Message, live string) ([]providers.Message, []contextNote) {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == providers.RoleUser {
			last = i
			break
		}
	}
	// A rewind shortened the history: the notes past it went with their messages.
	for len(notes) > 0 && notes[len(notes)-1].at >= len(msgs) {
		notes = notes[:len(notes)-1]
	}
	if last >= 0 && strings.TrimSpace(live) != "" {
		switch n := len(notes); {
		case n > 0 && notes[n-1].at == last:
			notes[n-1].text = live
		case n == 0 || notes[n-1].text != live:
			notes = append(notes, contextNote{at: last, text: live})
		}
	}
	if len(notes) == 0 {
		return msgs, notes
	}
	out := make([]providers.Message, len(msgs))
	copy(out, msgs)
	for _, n := range notes {
		m := out[n.at]
		if m.Role != providers.RoleUser {
			continue
		}
		parts := make([]providers.Part, len(m.Parts), len(m.Parts)+1)
		copy(parts, m.Parts)
		m.Parts = append(parts, providers.Part{Type: providers.PartText, Text: "<context>\n" + escapeEnvelope(strings.TrimRight(n.text, "\n")) + "\n</context>"})
		out[n.at] = m
	}
	return out, notes
}
