package mcp

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentd-dev/agentd/tools"
)

// FindToolsName is the built-in tool the model gets when the servers' tools exceed the Budget.
const FindToolsName = "find_tools"

// maxFindResults bounds the tools one find_tools call returns (and adds).
const maxFindResults = 8

// findToolsDescription is what the model reads about find_tools (find_tools.md, the tool's text
// beside its code as the built-in tools' is in prompts/builtin/tools.yml).
//
//go:embed find_tools.md
var findToolsDescription string

type findToolsIn struct {
	Query string `json:"query"`
}

// findTools is the find_tools tool of one snapshot: it searches over, the contributed tools the
// budget left out, and adds what it returns to its set's found tools.
type findTools struct {
	set  *Set
	over []*Tool
}

func (f *findTools) Name() string        { return FindToolsName }
func (f *findTools) Description() string { return strings.TrimSpace(findToolsDescription) }
func (f *findTools) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","maxLength":200,"description":"A few words of what the tool should do"}},"required":["query"]}`)
}
func (f *findTools) Effect() tools.Effect { return tools.EffectRead }
func (f *findTools) Kind() string         { return "search" }
func (f *findTools) Title(args json.RawMessage) string {
	var in findToolsIn
	if json.Unmarshal(args, &in) == nil && in.Query != "" {
		return "Find MCP tools: " + Clean(in.Query, 80)
	}
	return "Find MCP tools"
}

// Run matches the query's words against each left-out tool's server, name and description
// (case-insensitively; a tool matching more words ranks first, ties in server order) and adds
// the best maxFindResults to the session's offered tools, at most MaxFound in all.
func (f *findTools) Run(_ context.Context, _ *tools.Env, args json.RawMessage) tools.Result {
	var in findToolsIn
	if len(args) > 0 {
		if err := json.Unmarshal(args, &in); err != nil {
			return tools.Errorf("Error: the arguments must be a JSON object {\"query\": \"...\"}: %v", err)
		}
	}
	if len(in.Query) > 200 {
		return tools.Errorf("field query: at most 200 characters (got %d)", len(in.Query))
	}
	words := strings.Fields(strings.ToLower(in.Query))
	type hit struct {
		t     *Tool
		score int
	}
	var hits []hit
	for _, t := range f.over {
		hay := strings.ToLower(t.Server() + " " + t.name + " " + strings.ReplaceAll(t.name, "_", " ") + " " + t.desc)
		score := 0
		for _, w := range words {
			if strings.Contains(hay, w) {
				score++
			}
		}
		if score > 0 || len(words) == 0 {
			hits = append(hits, hit{t, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return b.score - a.score })
	if len(hits) == 0 {
		return tools.Result{Output: fmt.Sprintf("No MCP tool not yet offered matches %q (%d are not offered). Try other words, or an empty query to list them.", Clean(in.Query, 80), len(f.over))}
	}
	f.set.mu.Lock()
	if f.set.found == nil {
		f.set.found = map[key]bool{}
	}
	room := MaxFound - len(f.set.found)
	var b strings.Builder
	added := 0
	for _, h := range hits {
		if added == maxFindResults {
			break
		}
		k := h.t.key()
		switch {
		case f.set.found[k]:
			fmt.Fprintf(&b, "- %s (server %s), already added: %s\n", h.t.name, h.t.Server(), h.t.desc)
		case room == 0:
			fmt.Fprintf(&b, "- %s (server %s), not added: the session holds the most found tools (%d): %s\n", h.t.name, h.t.Server(), MaxFound, h.t.desc)
		default:
			f.set.found[k] = true
			room--
			fmt.Fprintf(&b, "- %s (server %s): %s\n", h.t.name, h.t.Server(), h.t.desc)
		}
		added++
	}
	f.set.foundGen++
	f.set.mu.Unlock()
	head := fmt.Sprintf("%d matching MCP tools; they are added to your tools from your next step:\n", added)
	if len(hits) > added {
		head = fmt.Sprintf("%d of %d matching MCP tools (narrow the query for others); they are added to your tools from your next step:\n", added, len(hits))
	}
	return tools.Result{Output: head + b.String()}
}
