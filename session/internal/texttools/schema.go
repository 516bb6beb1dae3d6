package texttools

import (
	"encoding/json"
	"iter"
	"strings"

	"github.com/agentd-dev/agentd/providers"
)

// The output constraint. A local server that can constrain sampling to a JSON Schema (llama-server's
// json_schema, Ollama's format) is sent EnvelopeSchema: the reply is exactly one call of one of
// the turn's tools, {"name": …, "arguments": …}, with the arguments the tool's schema allows.
// The terminal tool respond is one of them, so a plain answer stays possible: the model answers
// in respond's text, as the text protocol asks it to anyway. The constraint only removes what the
// protocol could not use (prose around a call, a quoted or fenced call, broken JSON), and a
// small model's call then parses.

// maxSchema bounds the envelope schema; past it the arguments are left unconstrained (any
// object) and only the tool names are: a server turns the schema into a grammar for every
// request, and a tool set of many large schemas (MCP servers) must not make that slow or fail.
const maxSchema = 32 << 10

// EnvelopeSchema is the JSON Schema of one reply under the output constraint for tools (respond
// among them). Each tool's argument schema is reduced to the keywords grammar converters read
// (type, properties, required, items, enum, const, anyOf, oneOf, additionalProperties and the
// bounds); a $ref, or nesting deeper than a few levels, allows any value there.
func EnvelopeSchema(tools []providers.ToolSpec) json.RawMessage {
	build := func(loose bool) json.RawMessage {
		branches := make([]any, 0, len(tools))
		for _, t := range tools {
			var args any = map[string]any{"type": "object"}
			if !loose {
				var v any
				if json.Unmarshal(t.Schema, &v) == nil {
					if m, ok := reduce(v, 0).(map[string]any); ok && len(m) > 0 {
						args = m
					}
				}
			}
			branches = append(branches, orderedObject{
				{"type", "object"},
				{"properties", orderedObject{{"name", map[string]any{"const": t.Name}}, {"arguments", args}}},
				{"required", []string{"name", "arguments"}},
				{"additionalProperties", false},
			})
		}
		b, _ := json.Marshal(map[string]any{"anyOf": branches})
		return b
	}
	if s := build(false); len(s) <= maxSchema {
		return s
	}
	return build(true)
}

// orderedObject marshals its keys in order: grammar converters emit properties in the order the
// schema lists them, and the name must come before the arguments.
type orderedObject []struct {
	k string
	v any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.k)
		v, err := json.Marshal(kv.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// maxDepth is how deep a tool's schema is followed; below it any value is allowed.
const maxDepth = 6

// reduce keeps the keywords of schema v that constrain the value and that grammar converters
// support; nil or a non-object schema allows anything.
func reduce(v any, depth int) any {
	m, ok := v.(map[string]any)
	if !ok || depth > maxDepth {
		return map[string]any{}
	}
	if _, ref := m["$ref"]; ref {
		return map[string]any{}
	}
	out := map[string]any{}
	for k, val := range m {
		switch k {
		case "type", "enum", "const", "required", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum":
			out[k] = val
		case "properties":
			props, ok := val.(map[string]any)
			if !ok {
				continue
			}
			rp := make(map[string]any, len(props))
			for name, ps := range props {
				rp[name] = reduce(ps, depth+1)
			}
			out[k] = rp
		case "items":
			out[k] = reduce(val, depth+1)
		case "additionalProperties":
			if b, ok := val.(bool); ok {
				out[k] = b
			} else {
				out[k] = reduce(val, depth+1)
			}
		case "anyOf", "oneOf":
			list, ok := val.([]any)
			if !ok {
				continue
			}
			rl := make([]any, 0, len(list))
			for _, s := range list {
				rl = append(rl, reduce(s, depth+1))
			}
			out["anyOf"] = rl // oneOf's exclusivity is no grammar's to enforce
		}
	}
	return out
}

// ReplyEvents reads a provider's stream under the output constraint. The server was asked for
// one JSON envelope, so a reply that starts (after blanks) with '{' or '[' is one: its text is
// not shown, and when the reply completes it is parsed as one envelope's body, its calls given
// as Events gives them. A reply that starts otherwise (a server that ignored the constraint) is
// read as Events reads it. A reply longer than an envelope may be is a failed call; one that
// fails is a failure, with no call.
func ReplyEvents(seq iter.Seq[providers.Event], idPrefix string, invalid func(Call) string) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		r := reader{idPrefix: idPrefix, invalid: invalid, yield: yield}
		var held []providers.Event // blank text, until a character decides
		plain, whole := false, false
		var body strings.Builder
		for ev := range seq {
			if plain {
				if !r.event(ev) {
					return
				}
				continue
			}
			if !whole && ev.Type == providers.EventTextDelta {
				t := strings.TrimLeft(ev.Text, " \t\r\n")
				held = append(held, ev)
				if t == "" {
					continue
				}
				if t[0] != '{' && t[0] != '[' {
					plain = true
					for _, h := range held {
						if !r.event(h) {
							return
						}
					}
					held = nil
					continue
				}
				whole = true
				for _, h := range held {
					body.WriteString(h.Text)
				}
				held = nil
				continue
			}
			switch ev.Type {
			case providers.EventTextDelta:
				if body.Len() <= maxEnvelope {
					body.WriteString(ev.Text)
				}
			case providers.EventCompleted:
				if whole {
					var calls []Call
					if body.Len() > maxEnvelope {
						calls = []Call{{Raw: body.String()[:200], Err: tooLong}}
					} else {
						calls = Parse(body.String())
					}
					for i := range calls {
						if !r.call(&calls[i]) {
							return
						}
					}
				} else {
					for _, h := range held { // only blanks: what Events makes of them
						if !r.event(h) {
							return
						}
					}
				}
				yield(ev)
				return
			default:
				if !yield(ev) || ev.Type == providers.EventFailed {
					return
				}
			}
		}
	}
}
