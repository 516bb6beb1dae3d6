package workspace

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// ByteEdit replaces the bytes [Start, End) of a text with NewText.
type ByteEdit struct {
	Start, End int
	NewText    string
}

// maxDiffCells bounds the line-diff table; beyond it ComputeEdits sends one replacement, which is
// always correct, just coarser.
const maxDiffCells = 4 << 20

// ComputeEdits turns oldText → newText into a few non-overlapping replacements of oldText, in
// order: the common prefix and suffix are kept, the middle is diffed by lines and each changed
// run of lines is trimmed again to the characters that differ. Every boundary falls on a
// character boundary of oldText and never between the "\r" and "\n" of a CRLF, so each edit can
// be expressed as an LSP range in any position encoding.
func ComputeEdits(oldText, newText string) []ByteEdit {
	if oldText == newText {
		return nil
	}
	start, end, nt := trim(oldText, 0, len(oldText), newText)
	mid := oldText[start:end]
	oldLines, newLines := splitLines(mid), splitLines(nt)
	if len(oldLines) < 2 || len(newLines) < 2 || (len(oldLines)+1)*(len(newLines)+1) > maxDiffCells {
		return []ByteEdit{{Start: start, End: end, NewText: nt}}
	}
	var edits []ByteEdit
	for _, h := range diffLines(oldLines, newLines) {
		oa := start + lineOffset(oldLines, h.oldFrom)
		ob := start + lineOffset(oldLines, h.oldTo)
		repl := strings.Join(newLines[h.newFrom:h.newTo], "")
		s, e, t := trim(oldText, oa, ob, repl)
		if s == e && t == "" {
			continue
		}
		edits = append(edits, ByteEdit{Start: s, End: e, NewText: t})
	}
	return edits
}

// trim narrows the replacement of oldText[a:b] by repl to the part that differs, keeping the
// boundaries on characters of oldText and outside CRLF pairs.
func trim(oldText string, a, b int, repl string) (int, int, string) {
	seg := oldText[a:b]
	p := 0
	for p < len(seg) && p < len(repl) && seg[p] == repl[p] {
		p++
	}
	for p > 0 && !boundary(oldText, a+p) {
		p--
	}
	s := 0
	for s < len(seg)-p && s < len(repl)-p && seg[len(seg)-1-s] == repl[len(repl)-1-s] {
		s++
	}
	for s > 0 && !boundary(oldText, b-s) {
		s--
	}
	return a + p, b - s, repl[p : len(repl)-s]
}

// boundary reports whether offset i of text starts a character and does not split a CRLF.
func boundary(text string, i int) bool {
	if i <= 0 || i >= len(text) {
		return true
	}
	if text[i-1] == '\r' && text[i] == '\n' {
		return false
	}
	return utf8.RuneStart(text[i])
}

// splitLines splits after every "\n", keeping the terminators (so a CRLF is never split).
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func lineOffset(lines []string, n int) int {
	off := 0
	for _, l := range lines[:n] {
		off += len(l)
	}
	return off
}

type hunk struct{ oldFrom, oldTo, newFrom, newTo int }

// diffLines finds the runs of lines that differ, by a longest-common-subsequence table.
func diffLines(a, b []string) []hunk {
	n, m := len(a), len(b)
	// lcs[i][j] = LCS length of a[i:], b[j:], stored row-major.
	w := m + 1
	lcs := make([]int32, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	var hunks []hunk
	i, j := 0, 0
	cur := hunk{-1, -1, -1, -1}
	flush := func() {
		if cur.oldFrom >= 0 {
			cur.oldTo, cur.newTo = i, j
			hunks = append(hunks, cur)
			cur = hunk{-1, -1, -1, -1}
		}
	}
	open := func() {
		if cur.oldFrom < 0 {
			cur.oldFrom, cur.newFrom = i, j
		}
	}
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			flush()
			i++
			j++
		case j < m && (i == n || lcs[i*w+j+1] >= lcs[(i+1)*w+j]):
			open()
			j++
		default:
			open()
			i++
		}
	}
	flush()
	return hunks
}

// ApplyEdits applies non-overlapping edits of text (in any order) and returns the result.
func ApplyEdits(text string, edits []ByteEdit) (string, error) {
	sorted := slices.Clone(edits)
	slices.SortStableFunc(sorted, func(x, y ByteEdit) int { return x.Start - y.Start })
	var b strings.Builder
	last := 0
	for _, e := range sorted {
		if e.Start < last || e.End < e.Start || e.End > len(text) {
			return "", fmt.Errorf("edit [%d,%d) overlaps another or lies outside the text", e.Start, e.End)
		}
		b.WriteString(text[last:e.Start])
		b.WriteString(e.NewText)
		last = e.End
	}
	b.WriteString(text[last:])
	return b.String(), nil
}
