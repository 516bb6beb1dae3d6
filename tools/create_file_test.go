package tools

import (
	"os"
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
