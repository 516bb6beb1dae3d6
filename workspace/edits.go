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

// maxDiffD bounds the line diff: past this many inserted plus deleted lines ComputeEdits sends
// one replacement, which is always correct, just coarser.
const maxDiffD = 2000

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
	if len(oldLines) < 2 || len(newLines) < 2 {
		return []ByteEdit{{Start: start, End: end, NewText: nt}}
	}
	hunks, ok := diffLines(oldLines, newLines)
	if !ok {
		return []ByteEdit{{Start: start, End: end, NewText: nt}}
	}
	var edits []ByteEdit
	for _, h := range hunks {
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

// diffLines finds the runs of lines that differ, with Myers' O((N+M)D) algorithm: fast when the
// texts are large and the changes few, which is the shape of an agent's edits. ok is false when
// more than maxDiffD lines change.
func diffLines(a, b []string) (hunks []hunk, ok bool) {
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, seen := ids[l]
			if !seen {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	delA, insB, ok := myers(x, y, maxDiffD)
	if !ok {
		return nil, false
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		if (i < len(x) && delA[i]) || (j < len(y) && insB[j]) {
			h := hunk{oldFrom: i, newFrom: j}
			for i < len(x) && delA[i] {
				i++
			}
			for j < len(y) && insB[j] {
				j++
			}
			h.oldTo, h.newTo = i, j
			hunks = append(hunks, h)
			continue
		}
		i++
		j++
	}
	return hunks, true
}

// myers returns which lines of a are deleted and which of b inserted by a shortest edit script,
// or ok false when that script is longer than maxD. trace[d][k+d] is the furthest x reached on
// diagonal k after d edits, kept per step so the path can be walked back.
func myers(a, b []int, maxD int) (delA, insB []bool, ok bool) {
	n, m := len(a), len(b)
	var trace [][]int
	for d := 0; d <= maxD && d <= n+m; d++ {
		cur := make([]int, 2*d+1)
		for k := -d; k <= d; k += 2 {
			x := 0
			if d > 0 {
				prev := trace[d-1]
				if k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]) {
					x = prev[k+1+d-1] // down: insert b[y]
				} else {
					x = prev[k-1+d-1] + 1 // right: delete a[x]
				}
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			cur[k+d] = x
			if x >= n && y >= m {
				trace = append(trace, cur)
				delA, insB = backtrack(trace, n, m)
				return delA, insB, true
			}
		}
		trace = append(trace, cur)
	}
	return nil, nil, false
}

func backtrack(trace [][]int, n, m int) ([]bool, []bool) {
	delA, insB := make([]bool, n), make([]bool, m)
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		k := x - y
		var pk int
		if k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := prev[pk+d-1]
		py := px - pk
		if pk == k+1 {
			insB[py] = true
		} else {
			delA[px] = true
		}
		x, y = px, py
	}
	return delA, insB
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
