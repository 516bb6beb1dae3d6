//go:build unix

package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd-dev/agentd/workspace"
)

// Containment is checked when a call is computed, and the user may take minutes to answer its
// permission request. An attacker (a program the model started earlier, a build step) that swaps
// a directory for a symlink to somewhere outside the roots while the request is open must not
// get the write, delete, move or program run to land out there: the paths are contained again
// just before the change is applied or the program spawned. Both ports: the disk (agentd exec)
// and the editor, which applies whatever path it is sent.
func TestSymlinkSwappedWhilePermissionIsOpen(t *testing.T) {
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"edit", "edit_file", map[string]any{"path": "sub/a.txt", "edits": []any{map[string]any{"old_text": "alpha", "new_text": "HACKED"}}}},
		{"create", "create_file", map[string]any{"path": "sub/new.txt", "content": "HACKED"}},
		{"overwrite", "create_file", map[string]any{"path": "sub/a.txt", "content": "HACKED", "overwrite": true}},
		{"mkdir", "create_dir", map[string]any{"path": "sub/newdir"}},
		{"delete", "delete_path", map[string]any{"path": "sub/a.txt"}},
		{"move out of", "move_path", map[string]any{"path": "sub/a.txt", "destination": "moved.txt"}},
		{"move into", "move_path", map[string]any{"path": "top.txt", "destination": "sub/top.txt"}},
		{"rename", "rename_path", map[string]any{"path": "sub/a.txt", "new_name": "c.txt"}},
		{"cwd", "run_program", map[string]any{"command": []string{"sh", "-c", "echo HACKED > made.txt"}, "cwd": "sub"}},
		{"module cwd", "run_program", map[string]any{"command": []string{"touch", "made.txt"}, "cwd": "sub/deeper"}},
	}
	for _, port := range []string{"disk", "editor"} {
		for _, c := range cases {
			t.Run(port+"/"+c.name, func(t *testing.T) {
				h := newHarness(t, map[string]string{"sub/a.txt": "alpha\n", "sub/deeper/k.txt": "k\n", "top.txt": "top\n"})
				if port == "disk" {
					h.env.WS = workspace.NewDisk()
				}
				out, _ := filepath.EvalSymlinks(t.TempDir())
				for name, text := range map[string]string{"a.txt": "outside\n", "deeper/k.txt": "outside k\n"} {
					os.MkdirAll(filepath.Dir(filepath.Join(out, name)), 0o755)
					os.WriteFile(filepath.Join(out, name), []byte(text), 0o644)
				}
				before := snapshotTree(t, out)
				h.env.Permit = func(context.Context, PermissionRequest) error {
					// The swap, while the user reads the request.
					if err := os.Rename(h.path("sub"), h.path("sub.orig")); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(out, h.path("sub")); err != nil {
						t.Fatal(err)
					}
					return nil
				}
				r := h.run(c.tool, c.args)
				if after := snapshotTree(t, out); !equalTrees(before, after) {
					t.Fatalf("the %s landed outside the roots: %v, was %v (result: %s)", c.tool, after, before, r.Output)
				}
				if !r.IsError {
					t.Errorf("the call succeeded after the swap: %s", r.Output)
				}
				if port == "editor" && len(h.ws.edits) != 0 {
					t.Errorf("the editor was sent %v after the swap", h.ws.edits)
				}
			})
		}
	}
}

// snapshotTree maps every entry under dir to its content ("<dir>" for directories).
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			m[rel] = "<dir>"
			return nil
		}
		b, _ := os.ReadFile(p)
		m[rel] = string(b)
		return nil
	})
	return m
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
