package workspace

import (
	"reflect"
	"strings"
	"testing"
)

func TestLineDiff(t *testing.T) {
	lines := func(s string) []string { return strings.Fields(s) }
	for _, tc := range []struct {
		a, b string
		want []Hunk
	}{
		{"a b c", "a b c", []Hunk{}},
		{"a b c", "a B c", []Hunk{{1, 2, 1, 2}}},
		{"a b c", "a c", []Hunk{{1, 2, 1, 1}}},
		{"a c", "a b c", []Hunk{{1, 1, 1, 2}}},
		{"", "x y", []Hunk{{0, 0, 0, 2}}},
		{"a b c d e f g", "A b c d e f G", []Hunk{{0, 1, 0, 1}, {6, 7, 6, 7}}},
	} {
		got, ok := LineDiff(lines(tc.a), lines(tc.b))
		if !ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("LineDiff(%q, %q) = %v %v, want %v", tc.a, tc.b, got, ok, tc.want)
		}
	}
}

func TestLineDiffGivesUpOnHugeChanges(t *testing.T) {
	a, b := make([]string, maxDiffD+1), make([]string, maxDiffD+1)
	for i := range a {
		a[i], b[i] = "old", "new"
	}
	if _, ok := LineDiff(a, b); ok {
		t.Fatal("a change of more than maxDiffD lines was diffed")
	}
}
