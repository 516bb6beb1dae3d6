package prompts

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// SchemaVersion is the one agent.yml schema_version this agentd reads.
const SchemaVersion = 2

type kind uint8

const (
	kText kind = iota // a string: compiled as a template
	kInt              // an unquoted integer (schema_version only)
	kList             // a non-empty list of elem
	kMap              // a map with exactly fields (optional ones may be left out)
	kDyn              // a map from free lower-case keys to elem (tools and their arguments)
)

type field struct {
	key      string
	kind     kind
	elem     *field
	fields   []*field
	optional bool
}

func text(k string) *field                { return &field{key: k, kind: kText} }
func group(k string, fs ...*field) *field { return &field{key: k, kind: kMap, fields: fs} }
func list(k string, elem *field) *field   { return &field{key: k, kind: kList, elem: elem} }
func texts(k string, ks ...string) *field {
	g := group(k)
	for _, s := range ks {
		g.fields = append(g.fields, text(s))
	}
	return g
}

// schema is every key the config has: a key missing, unknown or of the wrong shape fails the
// load naming its file and path. agent.yml's own keys come first. It is built at first use (a
// config load), not at every start of the daemon.
var schema = sync.OnceValue(func() *field {
	return group("",
		&field{key: "schema_version", kind: kInt},
		text("identity"),
		list("include", &field{kind: kText}),
		list("rules", group("", text("title"), list("items", &field{kind: kText}))),
		&field{key: "tools", kind: kDyn, elem: group("", text("description"),
			&field{key: "arguments", kind: kDyn, elem: &field{kind: kText}, optional: true},
			// fields describes the members of an argument that is an object or a list of objects
			// (edit_file's edits: old_text, new_text, replace_all).
			&field{key: "fields", kind: kDyn, elem: &field{kind: kDyn, elem: &field{kind: kText}}, optional: true})},
		texts("context", "mode_auto", "mode_ask", "mode_plan", "instructions_heading", "instructions_cut", "skills_heading", "skills_more", "agents_heading", "outside", "selection_cut"),
		texts("loop", "cancelled", "tool_crashed", "unfinished_turn", "required_tool", "truncated", "call_truncated"),
		texts("call", "no_name", "unknown_tool", "args_too_big", "args_not_json", "args_not_object", "cancelled", "interrupted", "mcp_plan_refusal", "mcp_rejected"),
		texts("saves", "kept_unsaved", "save_failed", "not_saved"),
		texts("attachments", "unreadable", "no_workspace", "image_undecodable"),
		text("tool_call_syntax"),
		text("tool_call_error"),
		text("tool_call_unfinished"),
		texts("approval", "rejected", "plan_refusal", "no_permission_ui", "rejected_always", "request_failed", "dismissed", "unknown_option", "corrected_with_instruction", "timed_out"),
		texts("review", "restored", "user_changed"),
		texts("chat_title", "system", "request"),
		texts("compaction", "system", "instruction", "summary", "acknowledgement"),
		texts("commands", "init", "skill"),
		texts("hooks", "blocked", "added", "objection", "context", "stop"),
		texts("answer_review", "system", "request", "approved", "end_marker", "heading"),
		texts("web_search", "system", "request"),
		texts("layout", "system", "context", "tool_results"),
	)
})

// agentOnly reports whether key is one only agent.yml may hold.
func agentOnly(key string) bool { return key == "schema_version" || key == "include" }

// Catalog names the real tools and each one's arguments, for checking the config's tool entries.
// A member of an argument that is an object or a list of objects is named ARGUMENT.MEMBER
// ("edits.old_text"); the config describes it under the tool's fields.ARGUMENT.MEMBER.
type Catalog map[string][]string

type loader struct {
	fsys  fs.FS
	where map[string]string // top-level key → the file that defines it
	raw   map[string]any    // top-level key → checked value
	errs  []error
}

func (l *loader) fail(format string, args ...any) {
	l.errs = append(l.errs, fmt.Errorf(format, args...))
}

// loadFS reads agent.yml and the files it includes from fsys, strictly; it reads no other file.
func loadFS(fsys fs.FS) (map[string]any, error) {
	l := &loader{fsys: fsys, where: map[string]string{}, raw: map[string]any{}}
	root, err := l.file("agent.yml")
	if err != nil {
		return nil, err
	}
	if v, ok := l.raw["schema_version"].(int); ok && v != SchemaVersion {
		return nil, fmt.Errorf("agent.yml: schema_version is %d; this agentd reads schema_version %d", v, SchemaVersion)
	}
	_ = root
	if inc, ok := l.raw["include"].([]any); ok {
		seen := map[string]bool{}
		for i, v := range inc {
			name := v.(*template).source()
			switch {
			case name == "agent.yml" || strings.ContainsAny(name, `/\`) || !strings.HasSuffix(name, ".yml"):
				l.fail("agent.yml: include[%d] %q must name a .yml file beside agent.yml (one level of includes)", i, name)
			case seen[name]:
				l.fail("agent.yml: include[%d] %q is listed twice", i, name)
			default:
				seen[name] = true
				if _, err := l.file(name); err != nil {
					l.errs = append(l.errs, err)
				}
			}
		}
	}
	for _, f := range schema().fields {
		if _, ok := l.raw[f.key]; !ok && !f.optional && len(l.errs) == 0 {
			l.fail("agent.yml: %s is missing (no listed file defines it)", f.key)
		}
	}
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return l.raw, nil
}

// file reads and checks one file's top-level keys.
func (l *loader) file(name string) (*yaml.Node, error) {
	data, err := fs.ReadFile(l.fsys, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: the file must hold a map of keys", name)
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		f := find(schema().fields, k.Value)
		switch {
		case f == nil:
			l.fail("%s: unknown key %s%s", name, k.Value, suggest(k.Value, schema().fields))
			continue
		case agentOnly(k.Value) && name != "agent.yml":
			l.fail("%s: %s belongs in agent.yml", name, k.Value)
			continue
		case l.where[k.Value] == name:
			l.fail("%s: %s is defined twice (line %d)", name, k.Value, k.Line)
			continue
		case l.where[k.Value] != "":
			l.fail("%s is defined in both %s and %s", k.Value, l.where[k.Value], name)
			continue
		}
		l.where[k.Value] = name
		if val, ok := l.check(name, k.Value, v, f); ok {
			l.raw[k.Value] = val
		}
	}
	return m, nil
}

// check turns node into the value f describes: *template, int, []any or map[string]any
// (lower-case keys, as in the file).
func (l *loader) check(file, path string, n *yaml.Node, f *field) (any, bool) {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		l.fail("%s: %s uses a YAML anchor or alias; write the text out", file, path)
		return nil, false
	}
	switch f.kind {
	case kText:
		if n.Kind != yaml.ScalarNode {
			l.fail("%s: %s must be a text", file, path)
			return nil, false
		}
		switch n.Tag {
		case "!!str":
		case "!!int", "!!float":
			l.fail("%s: %s is a number (%s); quote it", file, path, n.Value)
			return nil, false
		case "!!null":
			l.fail("%s: %s is empty", file, path)
			return nil, false
		default:
			l.fail("%s: %s is not a text (%s); quote it", file, path, n.Value)
			return nil, false
		}
		t, err := compile(file+": "+path, n.Value)
		if err != nil {
			l.errs = append(l.errs, err)
			return nil, false
		}
		return t, true
	case kInt:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			l.fail("%s: %s must be a whole number", file, path)
			return nil, false
		}
		var v int
		if err := n.Decode(&v); err != nil {
			l.fail("%s: %s: %v", file, path, err)
			return nil, false
		}
		return v, true
	case kList:
		if n.Kind != yaml.SequenceNode {
			l.fail("%s: %s must be a list", file, path)
			return nil, false
		}
		if len(n.Content) == 0 {
			l.fail("%s: %s is empty", file, path)
			return nil, false
		}
		out := make([]any, 0, len(n.Content))
		ok := true
		for i, e := range n.Content {
			v, good := l.check(file, fmt.Sprintf("%s[%d]", path, i), e, f.elem)
			ok = ok && good
			out = append(out, v)
		}
		return out, ok
	}
	// kMap and kDyn.
	if n.Kind != yaml.MappingNode {
		l.fail("%s: %s must be a map of keys", file, path)
		return nil, false
	}
	if len(n.Content) == 0 {
		l.fail("%s: %s is empty", file, path)
		return nil, false
	}
	out := map[string]any{}
	line := map[string]int{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := join(path, k.Value)
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" || !lowerKey(k.Value) {
			l.fail("%s: %s: the key %q must be lower_case letters, digits and _", file, path, k.Value)
			ok = false
			continue
		}
		if prev, dup := line[k.Value]; dup {
			l.fail("%s: %s is defined twice (lines %d and %d)", file, sub, prev, k.Line)
			ok = false
			continue
		}
		line[k.Value] = k.Line
		ef := f.elem
		if f.kind == kMap {
			if ef = find(f.fields, k.Value); ef == nil {
				l.fail("%s: unknown key %s%s", file, sub, suggest(k.Value, f.fields))
				ok = false
				continue
			}
		}
		val, good := l.check(file, sub, v, ef)
		ok = ok && good
		out[k.Value] = val
	}
	if f.kind == kMap {
		for _, sf := range f.fields {
			if _, has := line[sf.key]; !has && !sf.optional {
				l.fail("%s: %s is missing", file, join(path, sf.key))
				ok = false
			}
		}
	}
	return out, ok
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func lowerKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func find(fs []*field, key string) *field {
	for _, f := range fs {
		if f.key == key {
			return f
		}
	}
	return nil
}

// suggest names the known key closest to a misspelt one.
func suggest(key string, fs []*field) string {
	best, bestD := "", 3
	for _, f := range fs {
		if d := distance(key, f.key); d < bestD {
			best, bestD = f.key, d
		}
	}
	if best == "" {
		var keys []string
		for _, f := range fs {
			keys = append(keys, f.key)
		}
		slices.Sort(keys)
		return " (known keys: " + strings.Join(keys, ", ") + ")"
	}
	return " (did you mean " + best + "?)"
}

// distance is the Levenshtein distance between two short keys.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev = cur
	}
	return prev[len(b)]
}
