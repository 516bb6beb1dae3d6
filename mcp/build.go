package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd-dev/agentd/tools"
)

// Budget is how many contributed tools reach the model in the prompt. It is shared across the
// servers in turn (round-robin in the order the servers were named: the session's list, then the
// user settings'), each server's tools taken in the order it declares them, so a third server
// gets its share as the first does; a server that needs less leaves the rest to the others. The
// chosen tools keep server, then declaration, order: stable from turn to turn, so the prompt cache
// holds. Beyond the budget the model gets find_tools, which adds matching tools (at most
// MaxFound) to the session's offered tools.
const Budget = 12

// MaxFound bounds the tools find_tools may add to a session beyond the Budget.
const MaxFound = 24

// Reserved is the name no contributed tool may take besides the built-in tools': the model's
// way to answer. FindToolsName is reserved too.
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

// key names a contributed tool across rebuilds: its server's name and its own.
type key struct{ server, tool string }

// build applies the four naming and budget rules to the servers' tools and returns the turn's
// registry (built-in tools first), what was dropped, and the tools over the budget that
// find_tools may offer (found, the tools it already added, are offered beyond the budget).
func build(builtin *tools.Registry, lists []listed, found map[key]bool) (*tools.Registry, []Drop, []*Tool) {
	reserved := map[string]bool{Reserved: true, FindToolsName: true, ListResourcesName: true, ReadResourceName: true}
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
	// The eligible tools, in server then declaration order, each with its model name.
	var ok []*Tool
	taken := map[string]bool{}
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
		default:
			taken[strings.ToLower(name)] = true
			ok = append(ok, newTool(c.sv, name, c.tool, schema))
		}
	}
	chosen := fairShare(ok, Budget)
	out := tools.NewRegistry(builtin.List()...)
	var over []*Tool
	nfound := 0
	for i, t := range ok {
		switch {
		case chosen[i]:
			out.Register(t)
		case found[t.key()] && nfound < MaxFound:
			nfound++
			out.Register(t)
		default:
			over = append(over, t)
			drops = append(drops, Drop{t.sv.cfg.Name, t.remote, fmt.Sprintf("over the budget of %d MCP tools (find_tools offers it)", Budget)})
		}
	}
	return out, drops, over
}

// fairShare picks at most budget of ts (in server then declaration order) round-robin across
// their servers: the first tool of each server, then the second of each, and so on.
func fairShare(ts []*Tool, budget int) map[int]bool {
	var order []*server
	byServer := map[*server][]int{}
	for i, t := range ts {
		if byServer[t.sv] == nil {
			order = append(order, t.sv)
		}
		byServer[t.sv] = append(byServer[t.sv], i)
	}
	chosen := map[int]bool{}
	for round := 0; len(chosen) < budget; round++ {
		more := false
		for _, sv := range order {
			if idx := byServer[sv]; round < len(idx) && len(chosen) < budget {
				chosen[idx[round]] = true
				more = true
			}
		}
		if !more {
			break
		}
	}
	return chosen
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
