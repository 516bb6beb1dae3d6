package tools

import (
	"os"
	"testing"
)

func TestMovePath(t *testing.T) {
	h := newHarness(t, map[string]string{"b.go": "package b\n", "dir/x.go": "package x\n", "dst/keep": ""})
	r := mustOK(t, h.run("move_path", map[string]any{"path": "dir", "destination": "dst"}))
	mustContain(t, r.Output, "Moved directory (1 file) dir to dst/dir")
	if _, err := os.Stat(h.path("dst/dir/x.go")); err != nil {
		t.Fatal(err)
	}
	mustOK(t, h.run("move_path", map[string]any{"path": "b.go", "destination": "deep/new/b2.go"}))
	if _, err := os.Stat(h.path("deep/new/b2.go")); err != nil {
		t.Fatal(err)
	}
	mustErr(t, h.run("move_path", map[string]any{"path": "dst", "destination": "dst/dir/inner"}), "into itself")
	mustErr(t, h.run("move_path", map[string]any{"path": "dst", "destination": "../elsewhere"}), "field destination", "outside")
	mustErr(t, h.run("move_path", map[string]any{"path": ".", "destination": "x"}), "workspace root")
	mustErr(t, h.run("move_path", map[string]any{"path": "dst/keep", "destination": ".git/keep"}), ".git")
	mustErr(t, h.run("move_path", map[string]any{"path": "deep/new/b2.go", "destination": "dst/keep"}), "already exists")
}
