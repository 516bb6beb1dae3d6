package term

import (
	"fmt"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	numbered := func(n int, change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				b.WriteString(s)
			} else {
				fmt.Fprintf(&b, "%d\n", i)
			}
		}
		return b.String()
	}
	for _, tc := range []struct {
		name     string
		old, new string
		created  bool
		want     string
	}{
		{"one line", "a\nb\nc\n", "a\nB\nc\n", false,
			"--- a/p/f\n+++ b/p/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"},
		{"created", "", "x\ny\n", true,
			"--- /dev/null\n+++ b/p/f\n@@ -0,0 +1,2 @@\n+x\n+y"},
		{"insertion", "a\nb\n", "a\nnew\nb\n", false,
			"--- a/p/f\n+++ b/p/f\n@@ -1,2 +1,3 @@\n a\n+new\n b"},
		// Changes 6 lines apart share a hunk; 7 apart get two.
		{"close changes merge", numbered(20, nil), numbered(20, map[int]string{3: "x\n", 10: "y\n"}), false,
			"--- a/p/f\n+++ b/p/f\n@@ -1,13 +1,13 @@\n 1\n 2\n-3\n+x\n 4\n 5\n 6\n 7\n 8\n 9\n-10\n+y\n 11\n 12\n 13"},
		{"far changes split", numbered(20, nil), numbered(20, map[int]string{3: "x\n", 11: "y\n"}), false,
			"--- a/p/f\n+++ b/p/f\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+x\n 4\n 5\n 6\n@@ -8,7 +8,7 @@\n 8\n 9\n 10\n-11\n+y\n 12\n 13\n 14"},
		{"crlf", "a\r\nb\r\n", "a\r\nc\r\n", false,
			"--- a/p/f\n+++ b/p/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(unifiedDiff("/p/f", tc.old, tc.new, tc.created, false), "\n")
			if got != tc.want {
				t.Fatalf("diff:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestUnifiedDiffTooLarge(t *testing.T) {
	var a, b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	got := unifiedDiff("f", a.String(), b.String(), false, false)
	if len(got) != 3 || got[2] != "@@ 3000 lines → 3000 lines (too large to show) @@" {
		t.Fatalf("got %d lines: %q", len(got), got[min(2, len(got)-1)])
	}
}
