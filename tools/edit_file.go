package tools

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentd-dev/agentd/workspace"
)

type editFileIn struct {
	Path  string       `json:"path" schema:"maxLength=4096"`
	Edits []editFileOp `json:"edits" schema:"minItems=1,maxItems=100"`
}

type editFileOp struct {
	OldText    string `json:"old_text" schema:"maxLength=1048576"`
	NewText    string `json:"new_text" schema:"maxLength=8388608"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

func (in editFileIn) title() string {
	if in.Path == "" {
		return ""
	}
	return "Edit " + in.Path
}

// EditFile is the edit_file tool.
var EditFile Tool = &typed[editFileIn]{spec: Spec{Name: "edit_file", Effect: EffectWrite, Kind: "edit", Title: "Edit file"}, run: editFile}

func editFile(ctx context.Context, env *Env, in editFileIn) Result {
	abs, bad := resolve(env, "path", in.Path, true)
	if bad != nil {
		return *bad
	}
	doc, bad := readDoc(ctx, env, "path", abs)
	if bad != nil {
		if strings.Contains(bad.Output, "does not exist") {
			bad.Output += "; create it with create_file"
		}
		return *bad
	}
	name := rel(env, abs)
	text := doc.Text
	crlf := strings.Contains(text, "\r\n")
	firstLine := 0
	replaced := 0
	for i, e := range in.Edits {
		field := fmt.Sprintf("edits[%d]", i)
		if e.OldText == "" {
			return Errorf("field %s.old_text is empty; to add text, include a neighbouring line in old_text and repeat it in new_text (or use create_file for a new file)", field)
		}
		old, nw := e.OldText, e.NewText
		n := strings.Count(text, old)
		if n == 0 && crlf && !strings.Contains(old, "\r\n") && strings.Contains(old, "\n") {
			// The model writes \n; the file has \r\n.
			old, nw = toCRLF(old), toCRLF(nw)
			n = strings.Count(text, old)
		}
		if n == 0 {
			hint := closestLines(text, e.OldText)
			if lineNumbered.MatchString(e.OldText) {
				hint = "old_text seems to start with read_file's line-number prefix (a number and a tab); leave the prefixes out. " + hint
			}
			return Errorf("field %s.old_text was not found in %s%s; nothing was changed. %s", field, name, afterEarlier(i), hint)
		}
		if n > 1 && !e.ReplaceAll {
			return Errorf("field %s.old_text occurs %d times in %s (at lines %s); nothing was changed. Include more surrounding lines to make it unique, or set replace_all:true", field, n, name, occurrenceLines(text, old, 10))
		}
		if old == nw {
			return Errorf("field %s: new_text is the same as old_text", field)
		}
		at := strings.Index(text, old)
		if l := strings.Count(text[:at], "\n") + 1; firstLine == 0 || l < firstLine {
			firstLine = l
		}
		if e.ReplaceAll {
			text = strings.ReplaceAll(text, old, nw)
		} else {
			text = strings.Replace(text, old, nw, 1)
		}
		replaced += n
	}
	if text == doc.Text {
		return Errorf("the edits leave %s unchanged", name)
	}
	diff := Diff{Path: abs, OldText: ptr(doc.Text), NewText: ptr(text)}
	if r := permit(ctx, env, PermissionRequest{Title: "Edit " + name, Kind: "edit", Paths: []string{abs}, Diffs: []Diff{diff}}); r != nil {
		return *r
	}
	change := workspace.Change{Kind: workspace.ChangeEdit, Path: abs, Version: doc.Version, OldText: doc.Text, NewText: text}
	if r := applyEdit(ctx, env, "Edit "+name, []workspace.Change{change}); r != nil {
		return *r
	}
	before, after := len(splitLines(doc.Text)), len(splitLines(text))
	msg := fmt.Sprintf("Edited %s: %s replaced, %d → %d lines.", name, plural(replaced, "occurrence"), before, after)
	return afterEdit(ctx, env, abs, Result{Output: msg, Diffs: []Diff{diff}, Locations: []Location{{Path: abs, Line: max(firstLine, 1)}}})
}

var lineNumbered = regexp.MustCompile(`^\s*[0-9]+\t`)

func afterEarlier(i int) string {
	if i == 0 {
		return ""
	}
	return " (after the earlier edits of this call)"
}

func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

func occurrenceLines(text, old string, limit int) string {
	var out []string
	off := 0
	for len(out) < limit {
		i := strings.Index(text[off:], old)
		if i < 0 {
			break
		}
		out = append(out, fmt.Sprint(strings.Count(text[:off+i], "\n")+1))
		off += i + max(len(old), 1)
	}
	return strings.Join(out, ", ")
}

// closestLines tells the model where the text it meant probably is: a whitespace-only difference
// when there is one, else the lines most like the first line of old_text.
func closestLines(text, old string) string {
	lines := splitLines(text)
	want := splitLines(old)
	if len(lines) == 0 {
		return "The file is empty."
	}
	// Whitespace-insensitive match of the whole block.
	norm := func(ls []string) string {
		var parts []string
		for _, l := range ls {
			if f := strings.Join(strings.Fields(l), " "); f != "" {
				parts = append(parts, f)
			}
		}
		return strings.Join(parts, "\n")
	}
	target := norm(want)
	k := len(want)
	if target != "" && k <= 200 {
		for s := 0; s+k <= len(lines) && s < 50000; s++ {
			if norm(lines[s:s+k]) == target {
				return fmt.Sprintf("Lines %d-%d match except for whitespace or indentation; copy them exactly:\n%s", s+1, s+k, numbered(lines, s, s+k))
			}
		}
	}
	first := ""
	for _, w := range want {
		if strings.TrimSpace(w) != "" {
			first = strings.TrimSpace(w)
			break
		}
	}
	best, bestScore := -1, 0.0
	fb := bigrams(first)
	for i, l := range lines {
		if i >= 50000 {
			break
		}
		if sc := dice(fb, bigrams(strings.TrimSpace(l))); sc > bestScore {
			best, bestScore = i, sc
		}
	}
	if best < 0 || bestScore < 0.3 {
		return "No similar lines either: read the file again (read_file) and copy the text exactly."
	}
	from := max(best-2, 0)
	to := min(best+max(k, 1)+2, len(lines))
	return fmt.Sprintf("The closest text is around line %d:\n%s", best+1, numbered(lines, from, to))
}

func numbered(lines []string, from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "%d\t%s\n", i+1, lines[i])
	}
	return b.String()
}

func bigrams(s string) map[string]int {
	m := map[string]int{}
	r := []rune(s)
	for i := 0; i+1 < len(r); i++ {
		m[string(r[i:i+2])]++
	}
	return m
}

func dice(a, b map[string]int) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter, na, nb := 0, 0, 0
	for k, v := range a {
		na += v
		inter += min(v, b[k])
	}
	for _, v := range b {
		nb += v
	}
	return 2 * float64(inter) / float64(na+nb)
}
