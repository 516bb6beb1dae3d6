package prompts

import (
	"fmt"
	"strings"
)

// A template is one text of the prompt config, compiled: literal text, {{NAME}} variables and
// {{#NAME}}…{{/NAME}} / {{^NAME}}…{{/NAME}} sections. It is the Mustache subset the config
// promises and nothing more: no partials, no escaping (the model reads plain text), no lambdas,
// no delimiter changes. A run value is inserted as it is, never parsed as a template; a text of
// the config that a template names is itself a template and is rendered in place.
type template struct {
	where string // "rules.yml: rules[1].items[0]": named in every error
	src   string
	nodes []node
}

type nodeKind uint8

const (
	nodeText nodeKind = iota
	nodeVar
	nodeSection
	nodeInverted
)

type node struct {
	kind nodeKind
	text string // nodeText: the text; otherwise the name ("." is the current item)
	kids []node
}

// compile parses src; where names the text in errors.
func compile(where, src string) (*template, error) {
	p := parser{src: src, where: where}
	nodes, closer, err := p.parse("")
	if err != nil {
		return nil, err
	}
	if closer != "" {
		return nil, fmt.Errorf("%s: {{/%s}} closes no section", where, closer)
	}
	return &template{where: where, src: src, nodes: nodes}, nil
}

type parser struct {
	src   string
	pos   int
	where string
}

// parse reads nodes until the end or a closing tag, which it returns (for the caller to match).
func (p *parser) parse(open string) ([]node, string, error) {
	var out []node
	for p.pos < len(p.src) {
		i := strings.Index(p.src[p.pos:], "{{")
		if i < 0 {
			out = appendText(out, p.src[p.pos:])
			p.pos = len(p.src)
			break
		}
		start := p.pos + i
		j := strings.Index(p.src[start+2:], "}}")
		if j < 0 {
			return nil, "", fmt.Errorf("%s: a {{ at byte %d is never closed with }}", p.where, start)
		}
		end := start + 2 + j + 2
		tag := strings.TrimSpace(p.src[start+2 : end-2])
		var sigil byte
		if tag != "" && (tag[0] == '#' || tag[0] == '^' || tag[0] == '/') {
			sigil, tag = tag[0], strings.TrimSpace(tag[1:])
		}
		if !validName(tag) || (sigil != 0 && tag == ".") {
			return nil, "", fmt.Errorf("%s: {{%s}} is not a tag this config knows (names are upper case: {{NAME}}, {{#NAME}}, {{^NAME}}, {{/NAME}}, {{.}})", p.where, p.src[start+2:end-2])
		}
		text := p.src[p.pos:start]
		if sigil != 0 {
			// A line holding only this tag and blanks vanishes whole, newline included.
			lineStart := strings.LastIndexByte(p.src[:start], '\n') + 1
			rest := p.src[end:]
			nl := strings.IndexByte(rest, '\n')
			after := rest
			if nl >= 0 {
				after = rest[:nl]
			}
			if lineStart >= p.pos && strings.Trim(p.src[lineStart:start], " \t") == "" && strings.TrimRight(after, " \t\r") == "" {
				text = p.src[p.pos:lineStart]
				if nl >= 0 {
					end += nl + 1
				} else {
					end = len(p.src)
				}
			}
		}
		out = appendText(out, text)
		p.pos = end
		switch sigil {
		case 0:
			out = append(out, node{kind: nodeVar, text: tag})
		case '/':
			if tag != open {
				if open == "" {
					return nil, "", fmt.Errorf("%s: {{/%s}} closes no section", p.where, tag)
				}
				return nil, "", fmt.Errorf("%s: {{/%s}} closes {{#%s}}", p.where, tag, open)
			}
			return out, tag, nil
		default:
			kids, closer, err := p.parse(tag)
			if err != nil {
				return nil, "", err
			}
			if closer != tag {
				return nil, "", fmt.Errorf("%s: section {{%c%s}} is never closed", p.where, sigil, tag)
			}
			k := nodeSection
			if sigil == '^' {
				k = nodeInverted
			}
			out = append(out, node{kind: k, text: tag, kids: kids})
		}
	}
	if open != "" {
		return nil, "", fmt.Errorf("%s: section {{#%s}} is never closed", p.where, open)
	}
	return out, "", nil
}

func appendText(out []node, s string) []node {
	if s == "" {
		return out
	}
	if n := len(out); n > 0 && out[n-1].kind == nodeText {
		out[n-1].text += s
		return out
	}
	return append(out, node{kind: nodeText, text: s})
}

func validName(s string) bool {
	if s == "." {
		return true
	}
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// maxDepth bounds how deep config texts may name each other, so a text that names itself
// fails instead of recursing forever.
const maxDepth = 16

// scope is one level of names: the config's, a run's, or one list item's (whose own names, if
// it is a map, come before FIRST and LAST).
type scope struct {
	names       map[string]any
	item        any // the current item, for {{.}}
	isItem      bool
	first, last bool
}

// renderer carries the scope stack through one rendering.
type renderer struct {
	b     *strings.Builder
	stack []scope
	known map[string]bool // run names a run may leave out (they read as empty)
	depth int
}

func (r *renderer) lookup(name string) (any, bool) {
	for i := len(r.stack) - 1; i >= 0; i-- {
		s := &r.stack[i]
		if s.isItem {
			switch name {
			case ".":
				return s.item, true
			case "FIRST":
				return s.first, true
			case "LAST":
				return s.last, true
			}
			if m, ok := s.item.(map[string]any); ok {
				if v, ok := m[name]; ok {
					return v, true
				}
			}
			continue
		}
		if v, ok := s.names[name]; ok {
			return v, true
		}
	}
	if r.known[name] {
		return nil, true
	}
	return nil, false
}

func (r *renderer) render(t *template) error {
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > maxDepth {
		return fmt.Errorf("%s: texts name each other more than %d deep (does a text name itself?)", t.where, maxDepth)
	}
	return r.nodes(t, t.nodes)
}

func (r *renderer) nodes(t *template, nodes []node) error {
	for i := range nodes {
		n := &nodes[i]
		if n.kind == nodeText {
			r.b.WriteString(n.text)
			continue
		}
		v, ok := r.lookup(n.text)
		if !ok {
			return fmt.Errorf("%s: unknown name {{%s}}", t.where, n.text)
		}
		switch n.kind {
		case nodeVar:
			if err := r.value(t, n.text, v); err != nil {
				return err
			}
		case nodeSection, nodeInverted:
			n0 := count(v)
			if n.kind == nodeInverted {
				if n0 == 0 {
					if err := r.nodes(t, n.kids); err != nil {
						return err
					}
				}
				continue
			}
			for k := range n0 {
				r.stack = append(r.stack, scope{item: at(v, k), isItem: true, first: k == 0, last: k == n0-1})
				err := r.nodes(t, n.kids)
				r.stack = r.stack[:len(r.stack)-1]
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// value writes a variable: a run string verbatim, a config text rendered.
func (r *renderer) value(t *template, name string, v any) error {
	switch v := v.(type) {
	case nil:
	case string:
		r.b.WriteString(v)
	case *template:
		return r.render(v)
	case bool:
		if v {
			r.b.WriteString("true")
		}
	case int:
		fmt.Fprint(r.b, v)
	default:
		return fmt.Errorf("%s: {{%s}} is a list or a group; use it as a section, {{#%s}}…{{/%s}}", t.where, name, name, name)
	}
	return nil
}

// count is how many times a section repeats for its value: never when false or empty, once
// for a scalar or a group, once per element for a list.
func count(v any) int {
	switch v := v.(type) {
	case nil:
		return 0
	case bool:
		if v {
			return 1
		}
		return 0
	case string:
		if v == "" {
			return 0
		}
	case *template:
		if len(v.nodes) == 0 {
			return 0
		}
	case []string:
		return len(v)
	case []any:
		return len(v)
	case []map[string]any:
		return len(v)
	}
	return 1
}

// at is the k-th item a section repeats for v.
func at(v any, k int) any {
	switch v := v.(type) {
	case []string:
		return v[k]
	case []any:
		return v[k]
	case []map[string]any:
		return v[k]
	}
	return v
}

func (t *template) source() string { return t.src }
