package tools

import (
	"fmt"
	"os"
	"testing"
)

func TestListDir(t *testing.T) {
	h := newHarness(t, map[string]string{
		".gitignore":          "node_modules/\n*.tmp\n",
		"go.mod":              "module x\n",
		"src/a.go":            "package a\n",
		"src/deep/deeper/x":   "x",
		"node_modules/p/i.js": "",
		"junk.tmp":            "",
		".git/HEAD":           "ref: refs/heads/main\n",
	})
	r := mustOK(t, h.run("list_dir", map[string]any{}))
	want := "./ (2 directories, 3 files)\n.gitignore (20 B)\ngo.mod (9 B)\nsrc/\n  a.go (10 B)\n  deep/\n"
	if r.Output[:len(want)] != want {
		t.Fatalf("output:\n%s", r.Output)
	}
	mustContain(t, r.Output, "1 directory deeper than 2 levels not expanded", "2 entries ignored by .gitignore", ".git skipped")
	r = mustOK(t, h.run("list_dir", map[string]any{"path": "src", "depth": 5}))
	mustContain(t, r.Output, "src/ (2 directories, 2 files)\na.go (10 B)\ndeep/\n  deeper/\n    x (1 B)")
	r = mustOK(t, h.run("list_dir", map[string]any{"path": "node_modules"}))
	mustContain(t, r.Output, "p/\n  i.js", "listed anyway")
	r = mustOK(t, h.run("list_dir", map[string]any{"include_ignored": true, "depth": 1}))
	mustContain(t, r.Output, "node_modules/", "junk.tmp")
}

func TestListDirCap(t *testing.T) {
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("f%02d", i)] = ""
	}
	h := newHarness(t, files)
	r := mustOK(t, h.run("list_dir", map[string]any{"max_entries": 5}))
	mustContain(t, r.Output, "f04", "15 more entries not shown")
}

// Past the limit, what a skipped directory holds is counted too: the note once said 3 here
// (each directory as one entry), as it said 701 for some 250,000 hidden entries.
func TestListDirCountsWhatIsHidden(t *testing.T) {
	files := map[string]string{"a.txt": ""}
	for _, d := range []string{"d1", "d2", "d3"} {
		for i := range 10 {
			files[fmt.Sprintf("%s/f%02d", d, i)] = ""
		}
	}
	h := newHarness(t, files)
	r := mustOK(t, h.run("list_dir", map[string]any{"max_entries": 1}))
	// a.txt is shown; d1, d2, d3 and their 30 files are not.
	mustContain(t, r.Output, "./ (3 directories, 31 files)", "33 more entries not shown")
	if r.Raw.(map[string]any)["notShown"] != 33 {
		t.Errorf("raw = %v", r.Raw)
	}
	// Depth still bounds what is counted: at depth 1 the files inside are not entries.
	r = mustOK(t, h.run("list_dir", map[string]any{"max_entries": 1, "depth": 1}))
	mustContain(t, r.Output, "3 more entries not shown")

	// Counting stops at its budget and says so.
	defer func(b int) { listCountBudget = b }(listCountBudget)
	listCountBudget = 5
	r = mustOK(t, h.run("list_dir", map[string]any{"max_entries": 1}))
	mustContain(t, r.Output, "./ (at least ", "more than 5 entries (counting stopped there) not shown")
}

func TestListDirRefusals(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"})
	outside := t.TempDir()
	if err := os.Symlink(outside, h.path("out")); err != nil {
		t.Fatal(err)
	}
	mustErr(t, h.run("list_dir", map[string]any{"path": "out"}), "symlink", "outside")
	mustErr(t, h.run("list_dir", map[string]any{"path": ".."}), "outside")
	mustErr(t, h.run("list_dir", map[string]any{"path": "a.go"}), "not a directory")
	mustErr(t, h.run("list_dir", map[string]any{"path": "nope"}), "does not exist")
	mustErr(t, h.run("list_dir", map[string]any{"depth": 11}), "field depth", "maximum is 10")
	mustErr(t, h.run("list_dir", map[string]any{"depth": true}), "field depth must be a number")
}
