package workspace

// Hunk is one run of changed lines: lines [OldFrom, OldTo) of the old text became lines
// [NewFrom, NewTo) of the new one. Either side may be empty (a pure insertion or deletion).
type Hunk struct{ OldFrom, OldTo, NewFrom, NewTo int }

// LineDiff returns the runs of lines that differ between a and b, in order, from the same Myers
// diff ComputeEdits uses, so what a client shows is what an edit changes. ok is false when more
// than maxDiffD lines change; a caller then shows the change whole.
func LineDiff(a, b []string) (hunks []Hunk, ok bool) {
	hs, ok := diffLines(a, b)
	if !ok {
		return nil, false
	}
	hunks = make([]Hunk, len(hs))
	for i, h := range hs {
		hunks[i] = Hunk{OldFrom: h.oldFrom, OldTo: h.oldTo, NewFrom: h.newFrom, NewTo: h.newTo}
	}
	return hunks, true
}
