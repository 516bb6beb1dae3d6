package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd-dev/agentd/tools"
)

// Budget is how many contributed tools reach the model. The first Budget tools in the order
// the servers were named (the session's list, then the user settings'), and within a server in
// the order it declares them, are kept: the order is the user's, stable from turn to turn, so the
// prompt cache holds and the user decides by ordering servers and choosing what each exposes.
const Budget = 12

// Reserved is the name no contributed tool may take besides the built-in tools': the model's
// way to answer.
const Reserved = "respond"

// validToolName reports whether name is what providers accept as a tool name (the strictest
// common rule, ^[A-Za-z0-9_-]{1,64}$). A loop, not a package-level regexp: compiling that one
// (its {1,64} unrolled) cost every start-up 60 KB in 860 allocations.
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// maxSchema bounds a contributed tool's input schema, which is sent on every model call.
const maxSchema = 16 << 10

type listed struct {
	sv      *server
	tools   []*sdk.Tool
	version int
	err     error
}

// Drop is a contributed tool not offered to the model, and why.
type Drop struct {
	Server, Tool, Reason string
}

// build applies the four naming and budget rules to the servers' tools and returns the turn's
// registry (built-in tools first) and what was dropped.
func build(builtin *tools.Registry, lists []listed) (*tools.Registry, []Drop) {
	reserved := map[string]bool{Reserved: true}
	for _, t := range builtin.List() {
		reserved[strings.ToLower(t.Name())] = true
	}
	var drops []Drop
	type cand struct {
		sv   *server
		tool *sdk.Tool
	}
	var cands []cand
	servers := map[string]map[string]bool{} // tool name → servers offering it
	for _, l := range lists {
		seen := map[string]bool{}
		for _, t := range l.tools {
			label := Clean(t.Name, maxLabel)
			switch {
			case t.Name != label || !validToolName(t.Name):
				drops = append(drops, Drop{l.sv.cfg.Name, label, "its name is not a valid tool name"})
			case reserved[strings.ToLower(t.Name)]:
				drops = append(drops, Drop{l.sv.cfg.Name, label, "its name is reserved by a built-in tool"})
			case seen[t.Name]:
				drops = append(drops, Drop{l.sv.cfg.Name, label, "the server declares it twice"})
			default:
				seen[t.Name] = true
				if servers[t.Name] == nil {
					servers[t.Name] = map[string]bool{}
				}
				servers[t.Name][l.sv.cfg.Name] = true
				cands = append(cands, cand{l.sv, t})
			}
		}
	}
	out := tools.NewRegistry(builtin.List()...)
	taken := map[string]bool{}
	n := 0
	for _, c := range cands {
		name := c.tool.Name
		if len(servers[name]) > 1 {
			name = qualify(c.sv.cfg.Name) + "_" + name
		}
		schema, err := inputSchema(c.tool.InputSchema)
		switch {
		case !validToolName(name):
			drops = append(drops, Drop{c.sv.cfg.Name, c.tool.Name, fmt.Sprintf("its qualified name %s is not a valid tool name", Clean(name, maxLabel))})
		case reserved[strings.ToLower(name)] || taken[strings.ToLower(name)]:
			drops = append(drops, Drop{c.sv.cfg.Name, c.tool.Name, fmt.Sprintf("its qualified name %s is taken", name)})
		case err != nil:
			drops = append(drops, Drop{c.sv.cfg.Name, c.tool.Name, err.Error()})
		case n == Budget:
			drops = append(drops, Drop{c.sv.cfg.Name, c.tool.Name, fmt.Sprintf("over the budget of %d MCP tools", Budget)})
		default:
			n++
			taken[strings.ToLower(name)] = true
			out.Register(newTool(c.sv, name, c.tool, schema))
		}
	}
	return out, drops
}

// qualify makes a server name usable in a tool name.
func qualify(server string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, server)
}

// inputSchema is the tool's schema as the model reads it: a JSON object schema. The server's
// JSON, as the SDK decoded it, is encoded again (object keys sorted), so the bound applies to
// what the model is sent.
func inputSchema(s any) (json.RawMessage, error) {
	if raw, ok := s.(json.RawMessage); ok {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			v = nil
		}
		s = v
	}
	raw, err := json.Marshal(s)
	if err != nil || len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	if len(raw) > maxSchema {
		return nil, fmt.Errorf("its input schema exceeds %d bytes", maxSchema)
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil, fmt.Errorf("its input schema is not a JSON object")
	}
	if t, ok := m["type"]; ok && t != "object" {
		return nil, fmt.Errorf("its input schema is not an object schema")
	}
	m["type"] = "object"
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	return json.Marshal(m)
}
