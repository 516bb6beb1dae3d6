package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n", "empty.txt": ""})
	r := mustOK(t, h.run("read_file", map[string]any{"path": "a.go"}))
	if r.Output != "1\tpackage a\n2\t\n3\tfunc A() {}\n" {
		t.Fatalf("output %q", r.Output)
	}
	if len(r.Locations) != 1 || r.Locations[0].Path != h.path("a.go") {
		t.Fatalf("locations %+v", r.Locations)
	}
	r = mustOK(t, h.run("read_file", map[string]any{"path": h.path("a.go"), "start_line": 3}))
	mustContain(t, r.Output, "3\tfunc A() {}", "[Lines 3-3 of 3.]")
	r = mustOK(t, h.run("read_file", map[string]any{"path": "empty.txt"}))
	mustContain(t, r.Output, "empty")
}

func TestReadFileUnsavedBuffer(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"})
	h.ws.open(h.path("a.go"), "package a\n\n// unsaved\n", 7)
	r := mustOK(t, h.run("read_file", map[string]any{"path": "a.go"}))
	mustContain(t, r.Output, "3\t// unsaved", "unsaved text")
	if raw := r.Raw.(map[string]any); raw["version"] != int32(7) || raw["dirty"] != true {
		t.Fatalf("raw %+v", raw)
	}
	// A buffer for a file that does not exist on disk yet reads too.
	h.ws.open(h.path("new.go"), "package b\n", 1)
	mustContain(t, mustOK(t, h.run("read_file", map[string]any{"path": "new.go"})).Output, "package b")
}

func TestReadFilePaging(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	b.WriteString(strings.Repeat("x", 5000) + "\n")
	h := newHarness(t, map[string]string{"big.txt": b.String()})
	r := mustOK(t, h.run("read_file", map[string]any{"path": "big.txt"}))
	mustContain(t, r.Output, "2000\tline 2000\n", "Showing lines 1-2000 of 2501", "start_line=2001")
	if strings.Contains(r.Output, "line 2001\n") {
		t.Fatal("not cut at 2000 lines")
	}
	r = mustOK(t, h.run("read_file", map[string]any{"path": "big.txt", "start_line": 2001}))
	mustContain(t, r.Output, "2001\tline 2001", "line shortened", "1 line longer than 2000")
	r = mustOK(t, h.run("read_file", map[string]any{"path": "big.txt", "start_line": 10, "end_line": 12}))
	if !strings.HasPrefix(r.Output, "10\tline 10\n11\tline 11\n12\tline 12\n") {
		t.Fatalf("range output %q", r.Output)
	}
	mustErr(t, h.run("read_file", map[string]any{"path": "big.txt", "start_line": 9999}), "start_line", "2501 lines")
	mustErr(t, h.run("read_file", map[string]any{"path": "big.txt", "start_line": 5, "end_line": 2}), "end_line")
}

func TestReadFileRefusals(t *testing.T) {
	h := newHarness(t, map[string]string{"bin.dat": "ab\x00cd", "latin1.txt": "caf\xe9\n", "dir/x.go": "package x\n"})
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o644)
	if err := os.Symlink(filepath.Join(outside, "secret"), h.path("link")); err != nil {
		t.Fatal(err)
	}
	mustErr(t, h.run("read_file", map[string]any{"path": "bin.dat"}), "binary")
	mustErr(t, h.run("read_file", map[string]any{"path": "latin1.txt"}), "binary")
	mustErr(t, h.run("read_file", map[string]any{"path": "../x"}), "field path", "outside the workspace roots")
	mustErr(t, h.run("read_file", map[string]any{"path": filepath.Join(outside, "secret")}), "outside the workspace roots")
	mustErr(t, h.run("read_file", map[string]any{"path": "link"}), "symlink")
	mustErr(t, h.run("read_file", map[string]any{"path": "missing.go"}), "does not exist")
	mustErr(t, h.run("read_file", map[string]any{"path": "dir"}), "directory")
	mustErr(t, h.run("read_file", map[string]any{"path": "~/.ssh/id_rsa"}), "~")
	h.write("huge.txt", strings.Repeat("a", MaxFileBytes+1))
	// The refusal names what works on a large file, and it does: search_text finds its lines.
	mustErr(t, h.run("read_file", map[string]any{"path": "huge.txt"}), "more than the", "search_text searches files of any size")
}

func TestBadArguments(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"})
	cases := []struct{ args, want string }{
		{`{}`, "missing required field path"},
		{`{"path": 3}`, "field path must be a string"},
		{`{"path": "a.go", "start_line": "2"}`, "field start_line must be a number"},
		{`{"path": "a.go", "start_line": 1.5}`, "start_line must be a whole number"},
		{`{"path": "a.go", "start_line": 0}`, "start_line is 0; the minimum is 1"},
		{`{"path": "a.go", "start_line": 1e300}`, "start_line"},
		{`{"path": "a.go", "start_line": 99999999999999999999999}`, "start_line"},
		{`{"path": "a.go", "extra": 1}`, "unknown field extra"},
		{`{"path": null}`, "field path must not be null"},
		{`[1,2]`, "must be an object"},
		{`{"path": "a.go"`, "not valid JSON"},
		{`{"path": "a.go"} {}`, "more than one JSON value"},
		{`{"path": "` + strings.Repeat("a", 5000) + `"}`, "field path is 5000 bytes"},
		{`{"path": "../../etc/passwd"}`, "outside the workspace roots"},
		{`{"path": "a\u0000b"}`, "NUL"},
	}
	for _, c := range cases {
		r := h.run("read_file", c.args)
		mustErr(t, r, c.want)
	}
	// A null optional field means "not given".
	mustOK(t, h.run("read_file", `{"path": "a.go", "start_line": null}`))
}

// TestReadFileAllocationsDoNotGrowWithLines: numbering a file's lines costs a few allocations in
// all, not several per line (a rune slice and a formatted print each, before).
func TestReadFileAllocationsDoNotGrowWithLines(t *testing.T) {
	long := strings.Repeat("é", readMaxLineRune+5)
	h := newHarness(t, map[string]string{
		"short.txt": strings.Repeat("hello, world\n", 10),
		"long.txt":  strings.Repeat("hello, world\n", 1000),
		"wide.txt":  "x\n" + long + "\ny\n",
	})
	want := "1\thello, world\n2\thello, world\n"
	if out := mustOK(t, h.run("read_file", map[string]any{"path": "short.txt"})).Output; !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 10 {
		t.Fatalf("output %q", out)
	}
	wide := mustOK(t, h.run("read_file", map[string]any{"path": "wide.txt"})).Output
	if want := "1\tx\n2\t" + long[:2*readMaxLineRune] + " …[line shortened]\n3\ty\n"; !strings.HasPrefix(wide, want) {
		t.Fatalf("a long line: %q", wide)
	}
	allocs := func(path string) float64 {
		return testing.AllocsPerRun(10, func() { h.run("read_file", map[string]any{"path": path}) })
	}
	short, many := allocs("short.txt"), allocs("long.txt")
	if many > short+5 {
		t.Errorf("1,000 lines cost %.0f allocations, 10 lines %.0f: the cost grows with the lines", many, short)
	}
}

// A file over MaxFileBytes is still readable by line range: the range is streamed from the disk
// in bounded memory (a 100 MB log read at its middle), and a read without a range is still
// refused with the way forward.
func TestReadFileLargeRange(t *testing.T) {
	h := newHarness(t, nil)
	var b strings.Builder
	for i := 1; b.Len() <= MaxFileBytes; i++ {
		fmt.Fprintf(&b, "line %d of a large log\r\n", i)
	}
	total := strings.Count(b.String(), "\n")
	h.write("big.log", b.String())
	r := mustOK(t, h.run("read_file", map[string]any{"path": "big.log", "start_line": 200000, "end_line": 200002}))
	want := fmt.Sprintf("200000\tline 200000 of a large log\n200001\tline 200001 of a large log\n200002\tline 200002 of a large log\n\n[Lines 200000-200002 of %d.", total)
	if !strings.HasPrefix(r.Output, want) {
		t.Fatalf("output:\n%s\nwant prefix:\n%s", r.Output, want)
	}
	if len(h.ws.reads) != 0 {
		t.Fatalf("the large file was asked of the editor: %v", h.ws.reads)
	}
	// The last line, and a start past the end.
	r = mustOK(t, h.run("read_file", map[string]any{"path": "big.log", "start_line": total}))
	mustContain(t, r.Output, fmt.Sprintf("%d\tline %d of a large log\n", total, total))
	mustErr(t, h.run("read_file", map[string]any{"path": "big.log", "start_line": total + 1}), "past the end")
	mustErr(t, h.run("read_file", map[string]any{"path": "big.log"}), "more than the", "start_line")
	// A large binary file is refused with or without a range.
	h.write("big.bin", "\x00"+strings.Repeat("a", MaxFileBytes))
	mustErr(t, h.run("read_file", map[string]any{"path": "big.bin", "start_line": 1, "end_line": 2}), "binary")
}

// readLineRange keeps a line far longer than its buffer only to the length read_file shows, and
// counts a last line without a newline.
func TestReadLineRangeLongLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	long := strings.Repeat("é", 300000) // 600 KB on one line
	if err := os.WriteFile(p, []byte("one\n"+long+"\nthree\nfour"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, total, err := readLineRange(context.Background(), p, 2, 3)
	if err != nil || total != 4 || len(w) != 2 || w[1] != "three" {
		t.Fatalf("got %d lines %q..., total %d, %v", len(w), w, total, err)
	}
	if len(w[0]) != 4*readMaxLineRune+4 || !strings.HasPrefix(long, w[0]) {
		t.Fatalf("long line kept as %d bytes", len(w[0]))
	}
	w, total, err = readLineRange(context.Background(), p, 4, 0)
	if err != nil || total != 4 || len(w) != 1 || w[0] != "four" {
		t.Fatalf("got %q, total %d, %v", w, total, err)
	}
}
