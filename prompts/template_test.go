package prompts

import (
	"strings"
	"testing"
)

func renderString(t *testing.T, src string, names map[string]any) (string, error) {
	t.Helper()
	tp, err := compile("test.yml: x", src)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	r := renderer{b: &b, stack: []scope{{names: names}}, known: map[string]bool{"ABSENT": true}}
	err = r.render(tp)
	return b.String(), err
}

func TestTemplate(t *testing.T) {
	sub, _ := compile("sub", "[{{NAME}}]")
	names := map[string]any{
		"NAME":  "Ada",
		"EMPTY": "",
		"YES":   true,
		"NO":    false,
		"LIST":  []string{"a", "b", "c"},
		"NONE":  []string{},
		"ROWS":  []map[string]any{{"K": "x", "V": "1"}, {"K": "y", "V": "2"}},
		"SUB":   sub,
	}
	cases := []struct{ src, want string }{
		{"hello {{NAME}}", "hello Ada"},
		{"{{ NAME }}", "Ada"},
		{"{{#YES}}y{{/YES}}{{#NO}}n{{/NO}}", "y"},
		{"{{^NO}}not{{/NO}}{{^YES}}never{{/YES}}", "not"},
		{"{{#EMPTY}}e{{/EMPTY}}{{^EMPTY}}empty{{/EMPTY}}", "empty"},
		{"{{#LIST}}{{.}}{{^LAST}}, {{/LAST}}{{/LIST}}", "a, b, c"},
		{"{{#LIST}}{{#FIRST}}<{{/FIRST}}{{.}}{{#LAST}}>{{/LAST}}{{/LIST}}", "<abc>"},
		{"{{#NONE}}x{{/NONE}}{{^NONE}}none{{/NONE}}", "none"},
		{"{{#ROWS}}{{K}}={{V}};{{/ROWS}}", "x=1;y=2;"},
		{"{{#ROWS}}{{NAME}}{{/ROWS}}", "AdaAda"}, // outer names stay visible
		{"{{SUB}}", "[Ada]"},                     // a config text is rendered where it is named
		{"{{#ROWS}}{{SUB}}{{/ROWS}}", "[Ada][Ada]"},
		{"{{ABSENT}}|{{#ABSENT}}x{{/ABSENT}}{{^ABSENT}}absent{{/ABSENT}}", "|absent"},
		// Standalone section lines vanish whole; a variable line stays.
		{"a\n{{#YES}}\nb\n{{/YES}}\nc\n", "a\nb\nc\n"},
		{"a\n  {{#NO}}  \nb\n  {{/NO}}\nc", "a\nc"},
		{"{{#LIST}}\n- {{.}}\n{{/LIST}}\n", "- a\n- b\n- c\n"},
		{"x {{#YES}}\ny{{/YES}} z", "x \ny z"}, // not alone on its line: kept
		{"{{NAME}}\n", "Ada\n"},
		{"no tags { } }} {", "no tags { } }} {"},
	}
	for _, c := range cases {
		got, err := renderString(t, c.src, names)
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.src, got, err, c.want)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{{NAME", "test.yml: x: a {{ at byte 0 is never closed"},
		{"{{#A}}x", "test.yml: x: section {{#A}} is never closed"},
		{"{{#A}}x{{/B}}", "test.yml: x: {{/B}} closes {{#A}}"},
		{"x{{/A}}", "test.yml: x: {{/A}} closes no section"},
		{"{{name}}", "{{name}} is not a tag"},
		{"{{>partial}}", "is not a tag"},
		{"{{{NAME}}}", "is not a tag"},
		{"{{#.}}x{{/.}}", "is not a tag"},
		{"{{MISSING}}", "test.yml: x: unknown name {{MISSING}}"},
		{"{{#MISSING}}{{/MISSING}}", "test.yml: x: unknown name {{MISSING}}"},
		{"{{.}}", "unknown name {{.}}"},
		{"{{LIST}}", "{{LIST}} is a list or a group; use it as a section"},
	}
	for _, c := range cases {
		_, err := renderString(t, c.src, map[string]any{"LIST": []string{"a"}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v; want %q", c.src, err, c.want)
		}
	}
}

// FuzzTemplate: any input compiles or fails with an error naming the text, and a compiled
// template renders without panicking; text without "{{" is its own rendering.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"", "a {{NAME}} b", "{{#LIST}}\n{{.}}\n{{/LIST}}\n", "{{^NO}}x{{/NO}}", "{{#A}}{{#B}}{{/B}}{{/A}}", "{{", "}}{{", "{{#LIST}}{{#FIRST}}{{/FIRST}}{{/LIST}}"} {
		f.Add(s)
	}
	names := map[string]any{"NAME": "{{NAME}}", "LIST": []string{"x", "y"}, "NO": false, "A": true, "B": []map[string]any{{"C": "c"}}}
	f.Fuzz(func(t *testing.T, src string) {
		tp, err := compile("fuzz.yml: x", src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yml: x: ") {
				t.Fatalf("error without its place: %v", err)
			}
			return
		}
		var b strings.Builder
		r := renderer{b: &b, stack: []scope{{names: names}}}
		err = r.render(tp)
		if err != nil && !strings.HasPrefix(err.Error(), "fuzz.yml: x: ") {
			t.Fatalf("error without its place: %v", err)
		}
		if !strings.Contains(src, "{{") && (err != nil || b.String() != src) {
			t.Fatalf("plain text %q rendered as %q, %v", src, b.String(), err)
		}
	})
}
