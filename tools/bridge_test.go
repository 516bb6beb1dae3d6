package tools_test

// The tools through the real editor bridge and the fake editor (a JSON-RPC peer with buffers and
// versions), and through workspace.Disk, the port `agentd exec` uses: what the in-package fake
// workspace stands in for, checked on the real thing.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

type rig struct {
	t    *testing.T
	root string
	ed   *fakeeditor.Editor
	env  *tools.Env
	deny bool
}

func newRig(t *testing.T, opts fakeeditor.Options, files map[string]string) *rig {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edEnd, agentEnd := fakeeditor.Pipe()
	ed := fakeeditor.New(t, edEnd, opts)
	conn := jsonrpc.NewConn(agentEnd, agentEnd, jsonrpc.Options{CallTimeout: 5 * time.Second})
	conn.Go(context.Background(), jsonrpc.MethodNotFoundHandler)
	t.Cleanup(func() { conn.Close() })
	b := editorbridge.New(conn, ed.BridgeCapabilities(), nil)
	roots, err := workspace.NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, root: root, ed: ed}
	r.env = &tools.Env{Roots: roots, WS: b.Workspace("s1", roots),
		Permit: func(ctx context.Context, req tools.PermissionRequest) error {
			if r.deny {
				return &tools.ErrDenied{Reason: "denied by the test"}
			}
			return nil
		},
		Progress: func(string) {},
	}
	return r
}

func (r *rig) path(name string) string { return filepath.Join(r.root, filepath.FromSlash(name)) }

func (r *rig) run(name string, args any) tools.Result {
	r.t.Helper()
	tool, ok := tools.Default().Lookup(name)
	if !ok {
		r.t.Fatalf("no tool %s", name)
	}
	raw, _ := json.Marshal(args)
	return tool.Run(context.Background(), r.env, raw)
}

func ok(t *testing.T, res tools.Result, wants ...string) {
	t.Helper()
	if res.IsError {
		t.Fatalf("error result: %s", res.Output)
	}
	for _, w := range wants {
		if !strings.Contains(res.Output, w) {
			t.Fatalf("output lacks %q:\n%s", w, res.Output)
		}
	}
}

func fails(t *testing.T, res tools.Result, wants ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("expected an error result, got:\n%s", res.Output)
	}
	for _, w := range wants {
		if !strings.Contains(res.Output, w) {
			t.Fatalf("error lacks %q:\n%s", w, res.Output)
		}
	}
}

func TestBridgeReadsAndSearchesUnsavedBuffers(t *testing.T) {
	r := newRig(t, fakeeditor.Full(), map[string]string{"a.go": "package a\n// on disk\n", "b.go": "package b\n"})
	r.ed.Open(r.path("a.go"), "package a\n// unsaved marker\n")
	ok(t, r.run("read_file", map[string]any{"path": "a.go"}), "2\t// unsaved marker", "unsaved")
	ok(t, r.run("read_file", map[string]any{"path": "b.go"}), "1\tpackage b")
	ok(t, r.run("search_text", map[string]any{"pattern": "unsaved marker"}), "a.go:2: // unsaved marker", "1 matching line")
	ok(t, r.run("search_text", map[string]any{"pattern": "on disk"}), "No matches.")
	fails(t, r.run("read_file", map[string]any{"path": "missing.go"}), "does not exist")
}

func TestBridgeEdits(t *testing.T) {
	r := newRig(t, fakeeditor.Full(), map[string]string{"a.go": "package a\n\nfunc A() {}\n", "old.txt": "bye\n"})
	r.ed.OpenFile(r.path("a.go"))
	ok(t, r.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "func A() {}", "new_text": "func A() int { return 1 }"}}}), "Edited a.go")
	if got := r.ed.Text(r.path("a.go")); got != "package a\n\nfunc A() int { return 1 }\n" {
		t.Fatalf("buffer %q", got)
	}
	if v, _ := r.ed.Version(r.path("a.go")); v != 2 {
		t.Fatalf("version %d", v)
	}
	if disk, _ := os.ReadFile(r.path("a.go")); string(disk) != "package a\n\nfunc A() {}\n" {
		t.Fatalf("the edit went behind the editor's back to disk: %q", disk)
	}
	ok(t, r.run("create_file", map[string]any{"path": "pkg/new.go", "content": "package pkg\n"}), "Created pkg/new.go")
	if got, found := r.ed.Lookup(r.path("pkg/new.go")); !found || got != "package pkg\n" {
		t.Fatalf("new file %q %v", got, found)
	}
	ok(t, r.run("rename_path", map[string]any{"path": "old.txt", "new_name": "renamed.txt"}), "Renamed")
	if _, found := r.ed.Lookup(r.path("renamed.txt")); !found {
		t.Fatal("rename not applied")
	}
	ok(t, r.run("delete_path", map[string]any{"path": "renamed.txt"}), "Deleted")
	if _, found := r.ed.Lookup(r.path("renamed.txt")); found {
		t.Fatal("delete not applied")
	}
	ok(t, r.run("create_dir", map[string]any{"path": "d1/d2"}))
	if st, err := os.Stat(r.path("d1/d2")); err != nil || !st.IsDir() {
		t.Fatalf("create_dir: %v", err)
	}
}

func TestBridgeStaleVersion(t *testing.T) {
	r := newRig(t, fakeeditor.Full(), map[string]string{"a.go": "package a\n"})
	r.ed.OpenFile(r.path("a.go"))
	// The user types while the permission prompt is up.
	r.env.Permit = func(ctx context.Context, req tools.PermissionRequest) error {
		r.ed.Edit(r.path("a.go"), "package a // typing\n")
		return nil
	}
	res := r.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "package a", "new_text": "package b"}}})
	fails(t, res, "read it again")
	if got := r.ed.Text(r.path("a.go")); got != "package a // typing\n" {
		t.Fatalf("the user's typing was overwritten: %q", got)
	}
}

func TestBridgeRefusedEditAndDenial(t *testing.T) {
	r := newRig(t, fakeeditor.Full(), map[string]string{"a.go": "package a\n"})
	r.ed.RefuseEdits("the user said no")
	fails(t, r.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "package a", "new_text": "package b"}}}), "the user said no")
	r.ed.RefuseEdits("")
	r.deny = true
	fails(t, r.run("create_file", map[string]any{"path": "x.go", "content": "package x\n"}), "permission denied")
	if len(r.ed.AppliedEdits()) != 0 {
		t.Fatalf("edits reached the editor: %+v", r.ed.AppliedEdits())
	}
}

func TestBridgeDiagnosticsAndSymbols(t *testing.T) {
	r := newRig(t, fakeeditor.Full(), map[string]string{"a.go": "package a\n\nfunc Foo() {}\n"})
	r.ed.SetDiagnostics(r.path("a.go"), []editorbridge.Diagnostic{{
		Range:    editorbridge.Range{Start: editorbridge.Position{Line: 2, Character: 5}, End: editorbridge.Position{Line: 2, Character: 8}},
		Severity: 1, Source: "compiler", Message: "Foo redeclared",
	}})
	ok(t, r.run("get_diagnostics", map[string]any{"path": "a.go"}), "a.go:3:6: error: Foo redeclared [compiler]")
	r.ed.SetSymbols([]editorbridge.WorkspaceSymbol{{Name: "Foo", Kind: 12, Location: editorbridge.Location{URI: "file://" + r.path("a.go"),
		Range: &editorbridge.Range{Start: editorbridge.Position{Line: 2}, End: editorbridge.Position{Line: 2, Character: 13}}}}})
	ok(t, r.run("find_symbol", map[string]any{"query": "Foo"}), "Foo (function) a.go:3", "language servers")
}

func TestBridgeMinimalEditorFallsBack(t *testing.T) {
	r := newRig(t, fakeeditor.Minimal(), map[string]string{"a.go": "package a\n\nfunc Foo() {}\n"})
	ok(t, r.run("read_file", map[string]any{"path": "a.go"}), "package a")
	ok(t, r.run("search_text", map[string]any{"pattern": "Foo"}), "a.go:3:")
	ok(t, r.run("find_symbol", map[string]any{"query": "Foo"}), "Foo (", "a.go:3")
	fails(t, r.run("get_diagnostics", map[string]any{}), "does not report diagnostics")
}

// workspace.Disk: the port agentd exec uses, with the same tools.
func TestDiskWorkspace(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n"), 0o644)
	roots, err := workspace.NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	env := &tools.Env{Roots: roots, WS: workspace.NewDisk(), Permit: func(context.Context, tools.PermissionRequest) error { return nil }}
	r := &rig{t: t, root: root, env: env}
	ok(t, r.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "package a", "new_text": "package b"}}}), "Edited")
	if b, _ := os.ReadFile(r.path("a.go")); string(b) != "package b\n" {
		t.Fatalf("disk %q", b)
	}
	ok(t, r.run("create_file", map[string]any{"path": "x/y.go", "content": "package y\n"}))
	ok(t, r.run("move_path", map[string]any{"path": "x/y.go", "destination": "z.go"}))
	ok(t, r.run("create_dir", map[string]any{"path": "empty/dir"}))
	ok(t, r.run("delete_path", map[string]any{"path": "x", "recursive": true}))
	for name, want := range map[string]bool{"z.go": true, "x": false, "empty/dir": true} {
		if _, err := os.Stat(r.path(name)); (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", name, err == nil, want)
		}
	}
	fails(t, r.run("create_file", map[string]any{"path": "z.go", "content": ""}), "already exists")
}

// The tools that read the disk or run programs, through the same rig: every tool of the contract
// runs at least once on the fake editor.
func TestBridgeOtherTools(t *testing.T) {
	r := newRig(t, fakeeditor.Full(), map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "src/a.go": "package a\n", ".gitignore": "out/\n", "out/x": ""})
	ok(t, r.run("list_dir", map[string]any{}), "src/", "a.go", "1 entries ignored by .gitignore")
	ok(t, r.run("project_overview", map[string]any{}), "Go module example.com/m", "Languages: Go (1)")
	ok(t, r.run("run_program", map[string]any{"command": []string{"go", "env", "GOMOD"}}), "go.mod", "[exit code 0")
	fails(t, r.run("run_program", map[string]any{"command": []string{"go", "version"}, "cwd": "/"}), "outside")
	r.deny = true
	fails(t, r.run("add_dependency", map[string]any{"ecosystem": "go", "package": "example.com/x"}), "permission denied")
	fails(t, r.run("edit_module_config", map[string]any{"ecosystem": "go", "action": "tidy"}), "permission denied")
	fails(t, r.run("create_dir", map[string]any{"path": "newdir"}), "permission denied")
	fails(t, r.run("move_path", map[string]any{"path": "src", "destination": "lib"}), "permission denied")
}
