package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file too large to read whole is searched in windows: line numbers count from the start of
// the file across every cut, a line longer than a window is still searched, a binary file is
// skipped as when read whole, and the buffer never grows past one window.
func TestSearchStreamsFilesLargerThanTheLimit(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		switch i {
		case 7, 500, 1000:
			fmt.Fprintf(&b, "line %d has the needle\n", i)
		case 600:
			b.WriteString(strings.Repeat("x", 300) + " needle in a long line " + strings.Repeat("y", 300) + "\n")
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), []byte("needle\x00"+strings.Repeat("needle\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("a needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"needle", `n\w+dle`} {
		m, err := compileMatcher(pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		out, err := search(context.Background(), searchOpts{Root: dir, Start: dir, Matcher: m,
			MaxPerFile: 50, MaxKept: 100, MaxFileBytes: 256, Window: 128, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if out.Streamed != 1 || out.Binary != 1 || out.Searched != 2 || out.TotalMatches != 5 {
			t.Fatalf("%s: streamed %d binary %d searched %d matches %d, want 1 1 2 5", pattern, out.Streamed, out.Binary, out.Searched, out.TotalMatches)
		}
		var lines []int
		for _, lm := range out.Files[0].Matches {
			lines = append(lines, lm.Line)
			if !strings.Contains(lm.Text, "needle") {
				t.Errorf("%s: line %d shows %q", pattern, lm.Line, lm.Text)
			}
		}
		if out.Files[0].Rel != "big.txt" || fmt.Sprint(lines) != "[7 500 600 1000]" {
			t.Errorf("%s: %s lines %v, want big.txt [7 500 600 1000]", pattern, out.Files[0].Rel, lines)
		}
	}

	m, _ := compileMatcher("needle", true, false)
	var got []int
	n, binary, buf, err := m.scanStream(context.Background(), big, nil, 128, func(line int, text []byte) bool {
		got = append(got, line)
		return true
	})
	if err != nil || binary || n != 4 || fmt.Sprint(got) != "[7 500 600 1000]" {
		t.Fatalf("scanStream = %d %v %v, lines %v", n, binary, err, got)
	}
	if cap(buf) > 128 {
		t.Errorf("the window grew to %d bytes", cap(buf))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := m.scanStream(ctx, big, nil, 128, func(int, []byte) bool { return true }); err == nil {
		t.Error("a cancelled scan went on")
	}
}

// Through the tool: a file over 32 MB is searched (it used to be skipped, while read_file's
// refusal pointed at search_text).
func TestSearchTextFindsLinesInAFileOver32MB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 33 MB file")
	}
	h := newHarness(t, map[string]string{})
	line := strings.Repeat("filler text of a large log ", 3) + "\n" // 82 bytes
	n := (33<<20)/len(line) + 1
	h.write("huge.log", strings.Repeat(line, n)+"the needle at the end\n")
	r := mustOK(t, h.run("search_text", map[string]any{"pattern": "needle", "path": "huge.log"}))
	mustContain(t, r.Output, fmt.Sprintf("huge.log:%d: the needle at the end", n+1), "1 over 32 MB, in 4 MB pieces")
	mustErr(t, h.run("read_file", map[string]any{"path": "huge.log"}), "search_text searches files of any size")
}
