package tools

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestSearchText(t *testing.T) {
	h := newHarness(t, map[string]string{
		".gitignore":      "build/\n*.log\n!keep.log\n",
		"main.go":         "package main\n\nfunc main() {\n\tctx := context.Background()\n\trun(ctx)\n}\n",
		"lib/lib.go":      "package lib\n\n// Deadline Exceeded here\nfunc Run(ctx context.Context) error { return nil }\n",
		"lib/lib_test.go": "package lib\n\nfunc TestRun(t *testing.T) { _ = context.TODO() }\n",
		"lib/.gitignore":  "gen.go\n",
		"lib/gen.go":      "package lib // context.Context generated\n",
		"build/out.go":    "context.Context in build output\n",
		"a.log":           "context.Context logged\n",
		"keep.log":        "context.Context kept\n",
		"bin.dat":         "context.Context\x00\x01",
		".hidden/h.go":    "package h // context.Context hidden\n",
	})
	r := mustOK(t, h.run("search_text", map[string]any{"pattern": "context.Context", "literal": true}))
	mustContain(t, r.Output, "lib/lib.go:4: func Run(ctx context.Context) error { return nil }", "keep.log:1:", ".hidden/h.go:1:", "3 matching lines in 3 files")
	for _, no := range []string{"build/out.go", "a.log", "gen.go", "bin.dat"} {
		if strings.Contains(r.Output, no+":") {
			t.Fatalf("%s should be skipped:\n%s", no, r.Output)
		}
	}
	mustContain(t, r.Output, "ignored by .gitignore", "1 binary")
	if len(r.Locations) != 3 || r.Locations[0].Line != 1 {
		t.Fatalf("locations %+v", r.Locations)
	}

	// Regexp, include and exclude.
	r = mustOK(t, h.run("search_text", map[string]any{"pattern": `func \w+\(`, "include": []string{"*.go"}, "exclude": []string{"*_test.go"}}))
	mustContain(t, r.Output, "main.go:3: func main() {", "lib/lib.go:4:", "2 matching lines in 2 files")
	r = mustOK(t, h.run("search_text", map[string]any{"pattern": `context\.\w+`, "path": "lib", "include": []string{"lib/**/*_test.go"}}))
	mustContain(t, r.Output, "lib/lib_test.go:3:", "1 matching line in 1 file")

	// Case-insensitive, both as a flag and as (?i).
	for _, args := range []map[string]any{
		{"pattern": "deadline exceeded", "case_insensitive": true},
		{"pattern": "(?i)DEADLINE exceeded"},
		{"pattern": "deadline EXCEEDED", "literal": true, "case_insensitive": true},
	} {
		r = mustOK(t, h.run("search_text", args))
		mustContain(t, r.Output, "lib/lib.go:3: // Deadline Exceeded here")
	}

	// include_ignored searches gitignored files too (never .git).
	r = mustOK(t, h.run("search_text", map[string]any{"pattern": "context.Context", "literal": true, "include_ignored": true}))
	mustContain(t, r.Output, "build/out.go:1:", "a.log:1:", "lib/gen.go:1:")

	// Naming an ignored directory searches it anyway.
	r = mustOK(t, h.run("search_text", map[string]any{"pattern": "context.Context", "literal": true, "path": "build"}))
	mustContain(t, r.Output, "build/out.go:1:", "searched it anyway")

	// One file as the path.
	r = mustOK(t, h.run("search_text", map[string]any{"pattern": "ctx", "path": "main.go"}))
	mustContain(t, r.Output, "main.go:4:", "main.go:5:", "2 matching lines in 1 file")

	r = mustOK(t, h.run("search_text", map[string]any{"pattern": "nothing-like-this"}))
	mustContain(t, r.Output, "No matches.")
}

func TestSearchTextDirtyBuffers(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n// old text on disk\n"})
	h.ws.open(h.path("a.go"), "package a\n// new unsaved marker\n", 3)
	h.ws.open(h.path("fresh.go"), "package a\n// unsaved marker in a new file\n", 1)
	r := mustOK(t, h.run("search_text", map[string]any{"pattern": "marker"}))
	mustContain(t, r.Output, "a.go:2: // new unsaved marker", "fresh.go:2:", "2 files with unsaved changes")
	r = mustOK(t, h.run("search_text", map[string]any{"pattern": "old text"}))
	mustContain(t, r.Output, "No matches.")
}

// A search of one directory reads only the unsaved buffers under it, and counts only those.
func TestSearchTextReadsOnlyTheBuffersItSearches(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n", "sub/b.go": "package sub\n"})
	h.ws.open(h.path("a.go"), "package a\n// marker outside\n", 2)
	h.ws.open(h.path("sub/b.go"), "package sub\n// marker inside\n", 2)
	r := mustOK(t, h.run("search_text", map[string]any{"pattern": "marker", "path": "sub"}))
	mustContain(t, r.Output, "sub/b.go:2: // marker inside", "1 file with unsaved changes")
	h.ws.mu.Lock()
	reads := slices.Clone(h.ws.reads)
	h.ws.mu.Unlock()
	if slices.Contains(reads, h.path("a.go")) {
		t.Fatalf("search of sub read the buffer of a.go: %v", reads)
	}
}

func TestSearchTextCaps(t *testing.T) {
	files := map[string]string{}
	for i := range 30 {
		var b strings.Builder
		for j := range 60 {
			fmt.Fprintf(&b, "hit %d %d\n", i, j)
		}
		files[fmt.Sprintf("f%02d.txt", i)] = b.String()
	}
	h := newHarness(t, files)
	r := mustOK(t, h.run("search_text", map[string]any{"pattern": "hit", "max_results": 70}))
	mustContain(t, r.Output, "1800 matching lines in 30 files; showing 70", "f00.txt:50: hit 0 49", "f00.txt: … 10 more", "f01.txt:20: hit 1 19")
	if strings.Contains(r.Output, "f02.txt:") {
		t.Fatalf("kept lines beyond the cap:\n%s", r.Output)
	}
}

func TestSearchTextRefusals(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"})
	mustErr(t, h.run("search_text", map[string]any{"pattern": "a(b"}), "field pattern", "literal:true")
	mustErr(t, h.run("search_text", map[string]any{"pattern": ""}), "field pattern")
	mustErr(t, h.run("search_text", map[string]any{"pattern": "a", "path": "../.."}), "field path", "outside")
	mustErr(t, h.run("search_text", map[string]any{"pattern": "a", "include": []string{""}}), "field include[0]")
	mustErr(t, h.run("search_text", map[string]any{"pattern": "a", "include": "x"}), "field include must be an array")
	mustErr(t, h.run("search_text", map[string]any{"pattern": "a", "max_results": 1000000}), "max_results", "maximum")
	mustErr(t, h.run("search_text", map[string]any{"pattern": "a", "path": "nope"}), "field path")
}

// The matcher must find exactly the lines Go's regexp finds, whatever prefilter it picks.
func TestMatcherAgreesWithRegexp(t *testing.T) {
	text := "Deadline exceeded\nDEADLINE EXCEEDED\nnothing\nfunc Foo(ctx context.Context) {\n" +
		"func  Bar(ctx context.Context)\n\u212Aelvin KELVIN kelvin\nſtop STOP\nx\n\nend"
	cases := []struct {
		pat        string
		literal, i bool
	}{
		{"deadline exceeded", false, true},
		{"(?i)deadline exceeded", false, false},
		{"context.Context", true, false},
		{"context.Context", true, true},
		{`func \w+\(ctx`, false, false},
		{`(?i)kelvin`, false, false},
		{`(?i)stop`, false, false},
		{`^$`, false, false},
		{`^x$`, false, false},
		{`foo|bar`, false, true},
		{`d`, false, false},
		{`(?i)x`, false, false},
		{`end`, true, false},
	}
	lines := strings.Split(text, "\n")
	for _, c := range cases {
		m, err := compileMatcher(c.pat, c.literal, c.i)
		if err != nil {
			t.Fatal(err)
		}
		src := c.pat
		if c.literal {
			src = regexp.QuoteMeta(src)
		}
		if c.i {
			src = "(?i)" + src
		}
		re := regexp.MustCompile(src)
		var want []int
		for i, l := range lines {
			if re.MatchString(l) {
				want = append(want, i+1)
			}
		}
		var got []int
		m.scan([]byte(text), func(line int, txt []byte) bool {
			got = append(got, line)
			if lines[line-1] != string(txt) {
				t.Errorf("%q: line %d text %q, want %q", c.pat, line, txt, lines[line-1])
			}
			return true
		})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q (literal=%v, i=%v): lines %v, want %v (lit %q fold %v)", c.pat, c.literal, c.i, got, want, m.lit, m.fold)
		}
	}
}

func TestSearchTextOutputBytesCap(t *testing.T) {
	line := "hit " + strings.Repeat("x", 400) + "\n"
	h := newHarness(t, map[string]string{"a.txt": strings.Repeat(line, 50), "b.txt": strings.Repeat(line, 50), "c.txt": strings.Repeat(line, 50),
		"d.txt": strings.Repeat(line, 50), "e.txt": strings.Repeat(line, 50), "f.txt": strings.Repeat(line, 50), "g.txt": strings.Repeat(line, 50),
		"h.txt": strings.Repeat(line, 50)})
	r := mustOK(t, h.run("search_text", map[string]any{"pattern": "hit", "max_results": 2000}))
	if len(r.Output) > MaxOutputBytes+2000 {
		t.Fatalf("output is %d bytes", len(r.Output))
	}
	mustContain(t, r.Output, "400 matching lines in 8 files; showing", "a.txt:1: hit xxx", " …\n")
}

func TestSearchTextCancelled(t *testing.T) {
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f%d.txt", i%10, i)] = "needle\n"
	}
	h := newHarness(t, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	mustErr(t, h.runCtx(ctx, "search_text", map[string]any{"pattern": "needle"}), "cancelled")
	// The queue drains and closes: the same tree searches normally afterwards.
	mustContain(t, mustOK(t, h.run("search_text", map[string]any{"pattern": "needle"})).Output, "200 matching lines in 200 files")
}
