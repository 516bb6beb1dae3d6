package tools

import (
	"testing"

	"github.com/agentd-dev/agentd/workspace"
)

func TestRenamePath(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n", "b.go": "package b\n"})
	r := mustOK(t, h.run("rename_path", map[string]any{"path": "a.go", "new_name": "aa.go"}))
	mustContain(t, r.Output, "Renamed file a.go to aa.go")
	ch := h.ws.edits[0][0]
	if ch.Kind != workspace.ChangeRename || ch.Path != h.path("a.go") || ch.NewPath != h.path("aa.go") {
		t.Fatalf("change %+v", ch)
	}
	if len(h.asked) != 1 || len(h.asked[0].Paths) != 2 || h.asked[0].Kind != "move" {
		t.Fatalf("permission %+v", h.asked)
	}
	mustErr(t, h.run("rename_path", map[string]any{"path": "aa.go", "new_name": "b.go"}), "already exists")
	mustOK(t, h.run("rename_path", map[string]any{"path": "aa.go", "new_name": "b.go", "overwrite": true}))
	mustErr(t, h.run("rename_path", map[string]any{"path": "b.go", "new_name": "../x.go"}), "field new_name")
	mustErr(t, h.run("rename_path", map[string]any{"path": "b.go", "new_name": ".."}), "field new_name")
	mustErr(t, h.run("rename_path", map[string]any{"path": "nope.go", "new_name": "x.go"}), "does not exist")
	mustErr(t, h.run("rename_path", map[string]any{"path": "b.go", "new_name": "b.go"}), "already called that")
	mustErr(t, h.run("rename_path", map[string]any{"path": ".", "new_name": "x"}), "workspace root")
	mustErr(t, h.run("rename_path", map[string]any{"path": "b.go"}), "missing required field new_name")
}
