package tools

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

type readFileIn struct {
	Path      string `json:"path" schema:"maxLength=4096"`
	StartLine int    `json:"start_line,omitempty" schema:"minimum=1,maximum=100000000"`
	EndLine   int    `json:"end_line,omitempty" schema:"minimum=1,maximum=100000000"`
}

func (in readFileIn) title() string {
	if in.Path == "" {
		return ""
	}
	return "Read " + in.Path
}

const (
	readMaxLines    = 2000
	readMaxLineRune = 2000
)

// ReadFile is the read_file tool.
var ReadFile Tool = &typed[readFileIn]{spec: Spec{Name: "read_file", Effect: EffectRead, Kind: "read", Title: "Read file"}, run: readFile}

func readFile(ctx context.Context, env *Env, in readFileIn) Result {
	abs, bad := resolve(env, "path", in.Path, false)
	if bad != nil {
		return *bad
	}
	doc, bad := readDoc(ctx, env, "path", abs)
	if bad != nil {
		return *bad
	}
	lines := splitLines(doc.Text)
	total := len(lines)
	start := max(in.StartLine, 1)
	if in.EndLine != 0 && in.EndLine < start {
		return Errorf("field end_line (%d) is before start_line (%d)", in.EndLine, start)
	}
	name := rel(env, abs)
	if total == 0 {
		return Result{Output: fmt.Sprintf("%s is empty.", name), Locations: []Location{{Path: abs}}, Raw: readRaw(doc.Version, doc.Dirty, 0)}
	}
	if start > total {
		return Errorf("field start_line: %s has %d lines; start_line %d is past the end", name, total, start)
	}
	end := total
	if in.EndLine != 0 {
		end = min(in.EndLine, total)
	}
	var b strings.Builder
	// The numbered lines in one allocation: each line shown with its number and a tab.
	size := 0
	for _, l := range lines[start-1 : end] {
		if size += len(l) + 8; size > MaxOutputBytes {
			break
		}
	}
	b.Grow(size)
	var num [20]byte
	shortened := 0
	last := start - 1
	for i := start; i <= end; i++ {
		if i-start >= readMaxLines || b.Len() >= MaxOutputBytes {
			break
		}
		line := lines[i-1]
		if len(line) > readMaxLineRune && utf8.RuneCountInString(line) > readMaxLineRune {
			line = string([]rune(line)[:readMaxLineRune]) + " …[line shortened]"
			shortened++
		}
		b.Write(strconv.AppendInt(num[:0], int64(i), 10))
		b.WriteByte('\t')
		b.WriteString(line)
		b.WriteByte('\n')
		last = i
	}
	if last < end {
		fmt.Fprintf(&b, "\n[Showing lines %d-%d of %d. The rest was cut to keep the output small: call read_file with start_line=%d to continue.]\n", start, last, total, last+1)
	} else if start > 1 || end < total {
		fmt.Fprintf(&b, "\n[Lines %d-%d of %d.]\n", start, last, total)
	}
	if shortened > 0 {
		fmt.Fprintf(&b, "[%s longer than %d characters shortened.]\n", plural(shortened, "line"), readMaxLineRune)
	}
	if doc.Dirty {
		b.WriteString("[This is the editor's unsaved text; the file on disk differs.]\n")
	}
	return Result{Output: b.String(), Locations: []Location{{Path: abs, Line: start}}, Raw: readRaw(doc.Version, doc.Dirty, total)}
}

func readRaw(version *int32, dirty bool, lines int) map[string]any {
	m := map[string]any{"lines": lines, "dirty": dirty}
	if version != nil {
		m["version"] = *version
	}
	return m
}

// splitLines splits text into lines without their terminators; a final newline does not start
// another line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
