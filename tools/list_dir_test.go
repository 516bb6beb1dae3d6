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
