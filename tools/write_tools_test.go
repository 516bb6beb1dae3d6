package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/workspace"
)

func TestCreateFile(t *testing.T) {
	h := newHarness(t, map[string]string{"old.txt": "old\n"})
	r := mustOK(t, h.run("create_file", map[string]any{"path": "pkg/new.go", "content": "package pkg\n"}))
	mustContain(t, r.Output, "Created pkg/new.go (1 line)")
	if len(r.Diffs) != 1 || r.Diffs[0].OldText != nil || *r.Diffs[0].NewText != "package pkg\n" || r.Diffs[0].Path != h.path("pkg/new.go") {
		t.Fatalf("diffs %+v", r.Diffs)
	}
	if len(h.asked) != 1 || h.asked[0].Paths[0] != h.path("pkg/new.go") || len(h.asked[0].Diffs) != 1 {
		t.Fatalf("permission %+v", h.asked)
	}
	if text, _, ok := h.ws.buffer(h.path("pkg/new.go")); !ok || text != "package pkg\n" {
		t.Fatalf("buffer %q", text)
	}
	mustErr(t, h.run("create_file", map[string]any{"path": "old.txt", "content": "x"}), "already exists", "overwrite")
	r = mustOK(t, h.run("create_file", map[string]any{"path": "old.txt", "content": "new\n", "overwrite": true}))
	if *r.Diffs[0].OldText != "old\n" {
		t.Fatalf("overwrite diff %+v", r.Diffs[0])
	}
	last := h.ws.edits[len(h.ws.edits)-1][0]
	if last.Kind != workspace.ChangeEdit || last.OldText != "old\n" || last.NewText != "new\n" {
		t.Fatalf("change %+v", last)
	}
}

func TestCreateFileRefusals(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n", ".git/config": "[core]\n"})
	outside := t.TempDir()
	os.Symlink(outside, h.path("escape"))
	mustErr(t, h.run("create_file", map[string]any{"path": "../x.go", "content": ""}), "outside")
	mustErr(t, h.run("create_file", map[string]any{"path": "escape/x.go", "content": ""}), "symlink", "outside")
	mustErr(t, h.run("create_file", map[string]any{"path": ".git/hooks/pre-commit", "content": ""}), ".git")
	mustErr(t, h.run("create_file", map[string]any{"path": "x.go"}), "missing required field content")
	mustErr(t, h.run("create_file", map[string]any{"path": "x.go", "content": strings.Repeat("a", 8388609)}), "field content is 8388609 bytes")
	h.deny = true
	r := h.run("create_file", map[string]any{"path": "x.go", "content": "package x\n"})
	mustErr(t, r, "permission denied", "the user refused")
	if _, err := os.Stat(h.path("x.go")); err == nil || len(h.ws.edits) != 0 {
		t.Fatal("a denied create changed something")
	}
	if len(h.asked) != 1 {
		t.Fatalf("asked %d times", len(h.asked))
	}
}

func TestEditFile(t *testing.T) {
	src := "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n"
	h := newHarness(t, map[string]string{"a.go": src})
	h.ws.open(h.path("a.go"), src, 4)
	r := mustOK(t, h.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{
		{"old_text": "func A() int {\n\treturn 1", "new_text": "func A() int {\n\treturn 2"},
		{"old_text": "func B", "new_text": "func Bee"},
	}}))
	mustContain(t, r.Output, "Edited a.go: 2 occurrences replaced")
	want := "package a\n\nfunc A() int {\n\treturn 2\n}\n\nfunc Bee() int {\n\treturn 1\n}\n"
	if text, v, _ := h.ws.buffer(h.path("a.go")); text != want || v != 5 {
		t.Fatalf("buffer v%d %q", v, text)
	}
	ch := h.ws.edits[0][0]
	if ch.Version == nil || *ch.Version != 4 || ch.OldText != src {
		t.Fatalf("change %+v", ch)
	}
	if r.Locations[0].Line != 3 || *r.Diffs[0].OldText != src || *r.Diffs[0].NewText != want {
		t.Fatalf("result %+v", r)
	}
	// replace_all.
	r = mustOK(t, h.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "int", "new_text": "int64", "replace_all": true}}}))
	mustContain(t, r.Output, "2 occurrences")
}

func TestEditFileFailures(t *testing.T) {
	src := "package a\n\nfunc A() {\n\tif x {\n\t\treturn\n\t}\n}\n\nfunc B() {\n\treturn\n}\n"
	h := newHarness(t, map[string]string{"a.go": src, "bin": "\x00\x01"})
	edit := func(edits ...map[string]any) Result {
		return h.run("edit_file", map[string]any{"path": "a.go", "edits": edits})
	}
	mustErr(t, edit(map[string]any{"old_text": "return", "new_text": "panic()"}), "edits[0].old_text occurs 2 times", "lines 5, 10", "replace_all")
	mustErr(t, edit(map[string]any{"old_text": "func C() {", "new_text": "x"}), "edits[0].old_text was not found", "closest text is around line", "func A() {")
	mustErr(t, edit(map[string]any{"old_text": "if x {\n    return\n}", "new_text": "y"}), "Lines 4-6 match except for whitespace", "4\t\tif x {")
	mustErr(t, edit(map[string]any{"old_text": "", "new_text": "x"}), "edits[0].old_text is empty")
	mustErr(t, edit(map[string]any{"old_text": "3\tfunc A() {\n4\t\tif x {", "new_text": "y"}), "line-number prefix", "around line 3")
	mustErr(t, edit(map[string]any{"old_text": "func A", "new_text": "func A"}), "same as old_text")
	// Atomic: a failing second edit leaves the file untouched.
	mustErr(t, edit(map[string]any{"old_text": "func A", "new_text": "func AA"}, map[string]any{"old_text": "nope", "new_text": "x"}), "edits[1].old_text was not found", "after the earlier edits")
	mustErr(t, h.run("edit_file", map[string]any{"path": "a.go", "edits": []any{}}), "field edits needs at least 1 items")
	mustErr(t, h.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "x"}}}), "missing required field edits[0].new_text")
	mustErr(t, h.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "x", "new_text": "y", "bogus": 1}}}), "unknown field edits[0].bogus")
	mustErr(t, h.run("edit_file", map[string]any{"path": "missing.go", "edits": []map[string]any{{"old_text": "x", "new_text": "y"}}}), "does not exist", "create_file")
	mustErr(t, h.run("edit_file", map[string]any{"path": "bin", "edits": []map[string]any{{"old_text": "x", "new_text": "y"}}}), "binary")
	if len(h.ws.edits) != 0 || len(h.asked) != 0 {
		t.Fatalf("failed edits reached the editor: %d edits, %d asks", len(h.ws.edits), len(h.asked))
	}
}

func TestEditFileStaleVersion(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"})
	h.ws.open(h.path("a.go"), "package a\n", 1)
	// The user types while the permission prompt is open: the buffer moves to version 2.
	h.env.Permit = func(ctx context.Context, req PermissionRequest) error {
		h.ws.mu.Lock()
		h.ws.bufs[h.path("a.go")].version = 2
		h.ws.bufs[h.path("a.go")].text = "package a // typed\n"
		h.ws.mu.Unlock()
		return nil
	}
	r := h.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "package a", "new_text": "package b"}}})
	mustErr(t, r, "did not apply", "version 2", "read it again")
	if text, _, _ := h.ws.buffer(h.path("a.go")); text != "package a // typed\n" {
		t.Fatalf("the user's text was overwritten: %q", text)
	}
}

func TestEditFileCRLF(t *testing.T) {
	h := newHarness(t, map[string]string{"w.txt": "one\r\ntwo\r\nthree\r\n"})
	mustOK(t, h.run("edit_file", map[string]any{"path": "w.txt", "edits": []map[string]any{{"old_text": "one\ntwo", "new_text": "1\n2"}}}))
	if text, _, _ := h.ws.buffer(h.path("w.txt")); text != "1\r\n2\r\nthree\r\n" {
		t.Fatalf("%q", text)
	}
}

func TestCreateDir(t *testing.T) {
	h := newHarness(t, map[string]string{"f": "x"})
	mustOK(t, h.run("create_dir", map[string]any{"path": "a/b/c"}))
	if st, err := os.Stat(h.path("a/b/c")); err != nil || !st.IsDir() {
		t.Fatal("directory not created")
	}
	r := mustOK(t, h.run("create_dir", map[string]any{"path": "a/b"}))
	mustContain(t, r.Output, "already exists")
	mustErr(t, h.run("create_dir", map[string]any{"path": "f"}), "is a file")
	mustErr(t, h.run("create_dir", map[string]any{"path": ".git/x"}), ".git")
	mustErr(t, h.run("create_dir", map[string]any{"path": "/"}), "outside")
}

func TestRenameMoveDelete(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n", "b.go": "package b\n", "dir/x.go": "package x\n", "dst/keep": ""})
	r := mustOK(t, h.run("rename_path", map[string]any{"path": "a.go", "new_name": "aa.go"}))
	mustContain(t, r.Output, "Renamed file a.go to aa.go")
	ch := h.ws.edits[0][0]
	if ch.Kind != workspace.ChangeRename || ch.Path != h.path("a.go") || ch.NewPath != h.path("aa.go") {
		t.Fatalf("change %+v", ch)
	}
	mustErr(t, h.run("rename_path", map[string]any{"path": "aa.go", "new_name": "b.go"}), "already exists")
	mustOK(t, h.run("rename_path", map[string]any{"path": "aa.go", "new_name": "b.go", "overwrite": true}))
	mustErr(t, h.run("rename_path", map[string]any{"path": "b.go", "new_name": "../x.go"}), "field new_name")
	mustErr(t, h.run("rename_path", map[string]any{"path": "nope.go", "new_name": "x.go"}), "does not exist")

	r = mustOK(t, h.run("move_path", map[string]any{"path": "dir", "destination": "dst"}))
	mustContain(t, r.Output, "Moved directory (1 file) dir to dst/dir")
	if _, err := os.Stat(h.path("dst/dir/x.go")); err != nil {
		t.Fatal(err)
	}
	mustOK(t, h.run("move_path", map[string]any{"path": "b.go", "destination": "deep/new/b2.go"}))
	mustErr(t, h.run("move_path", map[string]any{"path": "dst", "destination": "dst/dir/inner"}), "into itself")
	mustErr(t, h.run("move_path", map[string]any{"path": "dst", "destination": "../elsewhere"}), "field destination", "outside")
	mustErr(t, h.run("move_path", map[string]any{"path": ".", "destination": "x"}), "workspace root")
	mustErr(t, h.run("move_path", map[string]any{"path": "dst/keep", "destination": ".git/keep"}), ".git")

	mustErr(t, h.run("delete_path", map[string]any{"path": "dst"}), "field recursive", "2 files")
	r = mustOK(t, h.run("delete_path", map[string]any{"path": "deep/new/b2.go"}))
	if len(r.Diffs) != 1 || *r.Diffs[0].OldText != "package a\n" || r.Diffs[0].NewText != nil {
		t.Fatalf("delete diff %+v", r.Diffs)
	}
	mustOK(t, h.run("delete_path", map[string]any{"path": "dst", "recursive": true}))
	if _, err := os.Stat(h.path("dst")); !os.IsNotExist(err) {
		t.Fatal("dst not deleted")
	}
	mustErr(t, h.run("delete_path", map[string]any{"path": "."}), "workspace root")
	mustErr(t, h.run("delete_path", map[string]any{"path": h.root}), "workspace root")
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

func TestWriteRefusedByEditor(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"})
	h.ws.refuse = "the user rejected the edit"
	r := h.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "package a", "new_text": "package b"}}})
	mustErr(t, r, "the user rejected the edit", "read it again")
	mustErr(t, h.run("delete_path", map[string]any{"path": "a.go"}), "the user rejected")
}
