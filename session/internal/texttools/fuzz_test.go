package texttools

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// splitAt cuts s into deltas at the positions the fuzzer's bytes choose.
func splitAt(s string, cuts []byte) []string {
	var out []string
	for _, c := range cuts {
		if len(s) == 0 {
			break
		}
		n := int(c)%len(s) + 1
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

var anyTag = regexp.MustCompile(`(?i)<\s*/?\s*tool_(call|response)`)

// FuzzExtractorAnyText: any text, cut anywhere, never panics, gives the same prose and calls as
// the same text in one delta, and never shows a complete tag as prose.
func FuzzExtractorAnyText(f *testing.F) {
	for _, s := range []string{
		"hello", "<tool_call>{\"name\":\"a\"}</tool_call>", "```json\n<tool_call>{'name':'a',}</tool_call>\n```\nok",
		"a <tool_response>x", "<tool_call>{\"name\":\"a\",\"arguments\":\"{}\"}", "``` <tool_call>", "<<tool_call>>",
		"<tool_call>\n```\n{\"name\": \"b\"}\n```\n</tool_call>\r\nz",
	} {
		f.Add(s, []byte{1, 2, 3})
	}
	f.Fuzz(func(t *testing.T, s string, cuts []byte) {
		p1, c1, cut1 := run(s)
		p2, c2, cut2 := run(splitAt(s, cuts)...)
		if p1 != p2 || strings.Join(c1, "\n") != strings.Join(c2, "\n") || cut1 != cut2 {
			t.Fatalf("split changed the result:\nwhole %q %q %v\nsplit %q %q %v", p1, c1, cut1, p2, c2, cut2)
		}
		for _, c := range c1 {
			if !strings.HasPrefix(c, "!") && strings.HasPrefix(c, "bad args") {
				t.Fatalf("a call's arguments are not JSON: %s", c)
			}
		}
		// Without a fence (no backtick), a complete opening tag at the start of a line (after at
		// most three spaces) is never shown: an envelope starts there, or the text is cut. One
		// after other text on its line is quoted, and shown.
		if !strings.Contains(s, "`") {
			for _, line := range strings.Split(p1, "\n") {
				if m := fullTag.FindStringIndex(line); m != nil && strings.TrimLeft(line[:m[0]], " ") == "" && m[0] <= 3 {
					t.Fatalf("prose %q shows the tag at the start of the line %q", p1, line)
				}
			}
		}
	})
}

var fullTag = regexp.MustCompile(`(?i)<tool_(call|response)[ \t]*>`)

// FuzzExtractorRoundTrip: prose and envelopes put together and cut anywhere come apart again:
// the prose is exactly the prose (no byte of an envelope in it), the calls exactly the calls.
func FuzzExtractorRoundTrip(f *testing.F) {
	f.Add("I'll read it.", "read_file", `{"path":"a.go"}`, "Done <b>.", []byte{5, 9, 1})
	f.Add("", "x", `{}`, "", []byte{})
	f.Add("a < b", "edit_file", `{"old":"</tool_call","new":"`+"```"+`"}`, "\n\nend", []byte{200, 3})
	f.Fuzz(func(t *testing.T, before, name, args, after string, cuts []byte) {
		before, after = clean(before), clean(after)
		name = strings.TrimSpace(clean(name))
		var obj map[string]any
		if name == "" || !utf8.ValidString(name) || json.Unmarshal([]byte(args), &obj) != nil || obj == nil || strings.Contains(strings.ToLower(args), "tool_") {
			t.Skip()
		}
		// The closing tag ends the envelope first, so args must not hold it (checked above);
		// a line break right after an envelope belongs to it.
		env := Envelope(name, json.RawMessage(args))
		// An envelope is a call only where it starts a line.
		before, after = before+"\n", after+"\n"
		text := before + env + after + env
		prose, calls, cut := run(splitAt(text, cuts)...)
		wantAfter := strings.TrimPrefix(strings.TrimPrefix(after, "\r\n"), "\n")
		if strings.HasPrefix(after, "\r") && !strings.HasPrefix(after, "\r\n") {
			wantAfter = after
		}
		if cut {
			t.Fatal("cut without a response tag")
		}
		if prose != before+wantAfter {
			t.Fatalf("prose = %q, want %q (text %q)", prose, before+wantAfter, text)
		}
		if len(calls) != 2 {
			t.Fatalf("calls = %q", calls)
		}
		want, _ := json.Marshal(obj)
		for _, c := range calls {
			if c != name+" "+string(want) {
				t.Fatalf("call = %q, want %q", c, name+" "+string(want))
			}
		}
	})
}

// clean keeps the round trip's prose free of what would legitimately change it: tags, fences and
// JSON that the parser would read.
func clean(s string) string {
	s = anyTag.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "`", "'")
	for anyTag.MatchString(s) {
		s = anyTag.ReplaceAllString(s, "")
	}
	return s
}
