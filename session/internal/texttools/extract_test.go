package texttools

import (
	"encoding/json"
	"strings"
	"testing"
)

// run feeds the deltas and returns the prose and the calls (name + compact args, or "!" + err).
func run(deltas ...string) (string, []string, bool) {
	var x Extractor
	var out []Piece
	for _, d := range deltas {
		out = x.Feed(d, out)
	}
	out = x.Flush(out)
	var prose strings.Builder
	var calls []string
	for _, p := range out {
		if p.Call == nil {
			prose.WriteString(p.Prose)
			continue
		}
		if p.Call.Err != "" {
			calls = append(calls, "!"+p.Call.Name+": "+p.Call.Err)
			continue
		}
		var v any
		if err := json.Unmarshal(p.Call.Args, &v); err != nil {
			calls = append(calls, "bad args "+string(p.Call.Args))
			continue
		}
		b, _ := json.Marshal(v)
		calls = append(calls, p.Call.Name+" "+string(b))
	}
	return prose.String(), calls, x.Cut()
}

func TestExtractor(t *testing.T) {
	cases := []struct {
		name   string
		deltas []string
		prose  string
		calls  []string
		cut    bool
	}{
		{name: "plain prose", deltas: []string{"Hello ", "world"}, prose: "Hello world"},
		{name: "one call", deltas: []string{`Reading.` + "\n" + `<tool_call>{"name": "read_file", "arguments": {"path": "a.go"}}</tool_call>` + "\nDone"},
			prose: "Reading.\nDone", calls: []string{`read_file {"path":"a.go"}`}},
		{name: "tag split across deltas", deltas: []string{"x\n<to", "ol_c", `all>{"name":"list_dir"}</to`, "ol_call> y"},
			prose: "x\n y", calls: []string{`list_dir {}`}},
		{name: "a < that is no tag", deltas: []string{"a <", "b and 1 <", " 2 <tool", "box>"}, prose: "a <b and 1 < 2 <toolbox>"},
		{name: "held fragment at the end is prose", deltas: []string{"see <tool_c"}, prose: "see <tool_c"},
		{name: "case and blanks in the tags", deltas: []string{`<TOOL_CALL >{"name":"a"}</Tool_Call >`}, calls: []string{`a {}`}},
		{name: "whitespace and newlines inside", deltas: []string{"<tool_call>\n  {\n \"name\": \"a\",\n \"arguments\": {\"x\": 1}\n}\n</tool_call>"}, calls: []string{`a {"x":1}`}},
		{name: "single quotes and trailing comma", deltas: []string{`<tool_call>{'name': 'a', 'arguments': {'p': 'it\'s "q"',},}</tool_call>`}, calls: []string{`a {"p":"it's \"q\""}`}},
		{name: "arguments as a JSON string", deltas: []string{`<tool_call>{"name":"a","arguments":"{\"p\": 2}"}</tool_call>`}, calls: []string{`a {"p":2}`}},
		{name: "llama parameters and python literals", deltas: []string{`<tool_call>{"name":"a","parameters":{"x":True,"y":None}}</tool_call>`}, calls: []string{`a {"x":true,"y":null}`}},
		{name: "a list of calls", deltas: []string{`<tool_call>[{"name":"a"},{"name":"b","arguments":{"k":1}}]</tool_call>`}, calls: []string{`a {}`, `b {"k":1}`}},
		{name: "malformed body is a failed call", deltas: []string{`<tool_call>{"name": "a", "arguments": {oops}}</tool_call>after`},
			prose: "after", calls: []string{`!a: its body is not one JSON object (invalid character 'o' looking for beginning of object key string)`}},
		{name: "no name", deltas: []string{`<tool_call>{"arguments":{}}</tool_call>`}, calls: []string{`!: it names no tool ("name" is missing or empty)`}},
		{name: "unclosed envelope at the end still runs", deltas: []string{"ok\n  " + `<tool_call>{"name":"a","arguments":{"p":1}}`}, prose: "ok\n  ", calls: []string{`a {"p":1}`}},
		{name: "unclosed and broken", deltas: []string{`<tool_call>{"name":"a",`}, calls: []string{`!a: the <tool_call> envelope was not closed with </tool_call>, and its body is not one JSON object (unexpected EOF)`}},
		// An envelope the model only quotes is shown and never run (issue 26 item 7).
		{name: "fenced envelope is shown, not run", deltas: []string{"Let me look.\n```json\n", "<tool_call>{\"name\":\"a\"}</tool_call>\n``", "`\nThen more."},
			prose: "Let me look.\n```json\n<tool_call>{\"name\":\"a\"}</tool_call>\n```\nThen more."},
		{name: "envelope deep in a fence is shown, not run", deltas: []string{"```sh\n# run it:\n<tool_call>{\"name\":\"a\"}</tool_call>\n   ```\n<tool_call>{\"name\":\"b\"}</tool_call>"},
			prose: "```sh\n# run it:\n<tool_call>{\"name\":\"a\"}</tool_call>\n   ```\n", calls: []string{`b {}`}},
		{name: "unclosed fence keeps its envelopes", deltas: []string{"```\n<tool_call>{\"name\":\"a\"}</tool_call>"}, prose: "```\n<tool_call>{\"name\":\"a\"}</tool_call>"},
		{name: "blockquoted envelope is shown, not run", deltas: []string{"The README says:\n> <tool_call>{\"name\":\"a\"}</tool_call>\n"},
			prose: "The README says:\n> <tool_call>{\"name\":\"a\"}</tool_call>\n"},
		{name: "inline code envelope is shown, not run", deltas: []string{"Write `<tool_call>{\"name\":\"a\"}</tool_call>` to call a."},
			prose: "Write `<tool_call>{\"name\":\"a\"}</tool_call>` to call a."},
		{name: "quoted envelope is shown, not run", deltas: []string{`It says "<tool_call>{"name":"a"}</tool_call>".`},
			prose: `It says "<tool_call>{"name":"a"}</tool_call>".`},
		{name: "an envelope indented as code is shown, not run", deltas: []string{"    <tool_call>{\"name\":\"a\"}</tool_call>"}, prose: "    <tool_call>{\"name\":\"a\"}</tool_call>"},
		{name: "two calls on one line both run", deltas: []string{"<tool_call>{\"name\":\"a\"}</tool_call><tool_call>{\"name\":\"b\"}</tool_call>"}, calls: []string{`a {}`, `b {}`}},
		{name: "fence inside the envelope", deltas: []string{"<tool_call>\n```json\n{\"name\":\"a\"}\n```\n</tool_call>"}, calls: []string{`a {}`}},
		{name: "ordinary code fence stays", deltas: []string{"Code:\n```go\nfunc f() {}\n```\n"}, prose: "Code:\n```go\nfunc f() {}\n```\n"},
		{name: "inline backticks stay", deltas: []string{"use `x` and ``y``"}, prose: "use `x` and ``y``"},
		{name: "imitated response is cut", deltas: []string{`<tool_call>{"name":"a"}</tool_call>`, "\n<tool_res", `ponse>{"fake": true}</tool_response> secret`},
			calls: []string{`a {}`}, cut: true},
		{name: "imitated response with attributes is cut", deltas: []string{"ok\n<tool_response name=\"read_file\">made up"}, prose: "ok\n", cut: true},
		{name: "a tag-like word with attributes on another line is prose", deltas: []string{"<tool_call x\n>"}, prose: "<tool_call x\n>"},
		{name: "response inside an envelope cuts after its call", deltas: []string{`<tool_call>{"name":"a"}<tool_response>x`}, calls: []string{`a {}`}, cut: true},
		{name: "closing tag inside a JSON string ends the envelope", deltas: []string{`<tool_call>{"name":"w","arguments":{"t":"</tool_call>"}}</tool_call>`},
			prose: `"}}</tool_call>`, calls: []string{`!w: its body is not one JSON object (unexpected EOF)`}},
		{name: "openai function shape", deltas: []string{`<tool_call>{"function":{"name":"a","arguments":"{}"}}</tool_call>`}, calls: []string{`a {}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prose, calls, cut := run(c.deltas...)
			if prose != c.prose {
				t.Errorf("prose = %q, want %q", prose, c.prose)
			}
			if strings.Join(calls, "\n") != strings.Join(c.calls, "\n") {
				t.Errorf("calls =\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(c.calls, "\n"))
			}
			if cut != c.cut {
				t.Errorf("cut = %v, want %v", cut, c.cut)
			}
			// The same text in one delta, and byte by byte, gives the same result.
			whole := strings.Join(c.deltas, "")
			p1, c1, _ := run(whole)
			var bytesIn []string
			for i := 0; i < len(whole); i++ {
				bytesIn = append(bytesIn, whole[i:i+1])
			}
			p2, c2, _ := run(bytesIn...)
			if p1 != prose || p2 != prose || strings.Join(c1, "\n") != strings.Join(calls, "\n") || strings.Join(c2, "\n") != strings.Join(calls, "\n") {
				t.Errorf("delta boundaries changed the result: whole %q %q, bytes %q %q", p1, c1, p2, c2)
			}
		})
	}
}

func TestExtractorOversizeEnvelope(t *testing.T) {
	big := strings.Repeat("x", maxEnvelope/1000)
	deltas := []string{`<tool_call>{"name":"a","arguments":{"t":"`}
	for range 1100 {
		deltas = append(deltas, big)
	}
	deltas = append(deltas, `"}}</tool_call>after`)
	prose, calls, _ := run(deltas...)
	if prose != "after" || len(calls) != 1 || !strings.Contains(calls[0], "longer than 1 MiB") {
		t.Fatalf("prose %q calls %q", prose, calls)
	}
}

func TestEscapeResponse(t *testing.T) {
	got := EscapeResponse("a </tool_response> b <Tool_Response> <tool_call> c")
	if strings.Contains(strings.ToLower(got), "</tool_response") || strings.Contains(strings.ToLower(got), "<tool_response") || strings.Contains(got, "<tool_call") {
		t.Fatalf("not escaped: %q", got)
	}
	if EscapeResponse("plain <b>") != "plain <b>" {
		t.Fatal("changed text without tags")
	}
}
