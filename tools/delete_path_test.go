package tools

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDeletePath(t *testing.T) {
	h := newHarness(t, map[string]string{"b.go": "package b\n", "dst/keep": "", "dst/dir/x.go": "package x\n", "bin": "\x00\x01"})
	mustErr(t, h.run("delete_path", map[string]any{"path": "dst"}), "field recursive", "2 files")
	r := mustOK(t, h.run("delete_path", map[string]any{"path": "b.go"}))
	if len(r.Diffs) != 1 || *r.Diffs[0].OldText != "package b\n" || r.Diffs[0].NewText == nil || *r.Diffs[0].NewText != "" || !r.Diffs[0].Deleted {
		t.Fatalf("delete diff %+v", r.Diffs)
	}
	if len(h.asked) != 1 || h.asked[0].Kind != "delete" || len(h.asked[0].Diffs) != 1 {
		t.Fatalf("permission %+v", h.asked)
	}
	r = mustOK(t, h.run("delete_path", map[string]any{"path": "bin"}))
	if len(r.Diffs) != 0 {
		t.Fatalf("a binary file got a text diff: %+v", r.Diffs)
	}
	mustOK(t, h.run("delete_path", map[string]any{"path": "dst", "recursive": true}))
	if _, err := os.Stat(h.path("dst")); !os.IsNotExist(err) {
		t.Fatal("dst not deleted")
	}
	mustErr(t, h.run("delete_path", map[string]any{"path": "."}), "workspace root")
	mustErr(t, h.run("delete_path", map[string]any{"path": h.root}), "workspace root")
	mustErr(t, h.run("delete_path", map[string]any{"path": "gone"}), "does not exist")
	mustErr(t, h.run("delete_path", map[string]any{"path": ".git/config"}), ".git")
}

func TestDeleteSymlinkNotTarget(t *testing.T) {
	h := newHarness(t, map[string]string{"real/f.go": "package f\n"})
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "precious"), []byte("x"), 0o644)
	if err := os.Symlink(h.path("real"), h.path("link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, h.path("out")); err != nil {
		t.Fatal(err)
	}
	mustOK(t, h.run("delete_path", map[string]any{"path": "link"}))
	if _, err := os.Stat(h.path("real/f.go")); err != nil {
		t.Fatal("deleting a link deleted its target")
	}
	mustErr(t, h.run("delete_path", map[string]any{"path": "out/precious"}), "outside")
	mustErr(t, h.run("move_path", map[string]any{"path": "out/precious", "destination": "p"}), "outside")
}
