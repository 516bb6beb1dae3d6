package tools

import (
	"context"
	"testing"
)

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

func TestWriteRefusedByEditor(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"})
	h.ws.refuse = "the user rejected the edit"
	r := h.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "package a", "new_text": "package b"}}})
	mustErr(t, r, "the user rejected the edit", "read it again")
	mustErr(t, h.run("delete_path", map[string]any{"path": "a.go"}), "the user rejected")
}
