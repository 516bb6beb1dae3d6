package term

import (
	"fmt"
	"strings"

	"github.com/agentd-dev/agentd/workspace"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// unifiedDiff renders old → new as unified diff lines, from the workspace's line diff (the same
// one the edits are computed with). The --- and +++ names are quoted (quoteName); the other lines
// are raw text: the caller escapes them.
func unifiedDiff(path, oldText, newText string, created, deleted bool) []string {
	a, b := splitLines(oldText), splitLines(newText)
	from, to := quoteName("a/"+strings.TrimPrefix(path, "/")), quoteName("b/"+strings.TrimPrefix(path, "/"))
	if created {
		from = "/dev/null"
	}
	if deleted {
		to = "/dev/null"
	}
	out := []string{"--- " + from, "+++ " + to}
	hunks, ok := workspace.LineDiff(a, b)
	if !ok {
		return append(out, fmt.Sprintf("@@ %d lines → %d lines (too large to show) @@", len(a), len(b)))
	}
	for i := 0; i < len(hunks); {
		// Changes closer than twice the context share one hunk, as diff -u does.
		j := i
		for j+1 < len(hunks) && hunks[j+1].OldFrom-hunks[j].OldTo <= 2*diffContext {
			j++
		}
		first, last := hunks[i], hunks[j]
		aFrom := max(first.OldFrom-diffContext, 0)
		bFrom := first.NewFrom - (first.OldFrom - aFrom)
		aTo := min(last.OldTo+diffContext, len(a))
		bTo := last.NewTo + (aTo - last.OldTo)
		out = append(out, fmt.Sprintf("@@ -%s +%s @@", hunkRange(aFrom, aTo), hunkRange(bFrom, bTo)))
		pos := aFrom
		for _, h := range hunks[i : j+1] {
			out = appendPrefixed(out, " ", a[pos:h.OldFrom])
			out = appendPrefixed(out, "-", a[h.OldFrom:h.OldTo])
			out = appendPrefixed(out, "+", b[h.NewFrom:h.NewTo])
			pos = h.OldTo
		}
		out = appendPrefixed(out, " ", a[pos:aTo])
		i = j + 1
	}
	return out
}

// hunkRange is a unified diff range: 1-based start and length, the start being the line before
// when the range is empty.
func hunkRange(from, to int) string {
	if from == to {
		return fmt.Sprintf("%d,0", from)
	}
	return fmt.Sprintf("%d,%d", from+1, to-from)
}

func appendPrefixed(out []string, prefix string, lines []string) []string {
	for _, l := range lines {
		out = append(out, prefix+l)
	}
	return out
}

// splitLines splits text into lines without their terminators; a CRLF's "\r" is a terminator
// too, so Windows files do not show an escaped \r on every line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
