package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/workspace"
)

// fakeWS is an in-package editor: open buffers with versions whose text may differ from the disk,
// applyEdit with a version check that writes buffers (not the disk, like an editor), and canned
// diagnostics and symbols.
type fakeWS struct {
	mu        sync.Mutex
	bufs      map[string]*fakeBuf
	diags     []workspace.FileDiagnostics
	symbols   []workspace.Symbol
	noSymbols bool
	refuse    string // applyEdit refuses with this reason when set
	edits     [][]workspace.Change
	saved     []string
	reads     []string // the paths ReadFile was asked for
}

type fakeBuf struct {
	text    string
	version int32
	dirty   bool
}

func newFakeWS() *fakeWS { return &fakeWS{bufs: map[string]*fakeBuf{}} }

// open opens path in the editor with text (dirty when it differs from the disk).
func (w *fakeWS) open(path, text string, version int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	disk, err := os.ReadFile(path)
	w.bufs[path] = &fakeBuf{text: text, version: version, dirty: err != nil || string(disk) != text}
}

func (w *fakeWS) buffer(path string) (string, int32, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.bufs[path]
	if !ok {
		return "", 0, false
	}
	return b.text, b.version, true
}

func (w *fakeWS) ReadFile(ctx context.Context, path string) (workspace.Doc, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads = append(w.reads, path)
	if b, ok := w.bufs[path]; ok {
		return workspace.Doc{Path: path, Text: b.text, Version: ptr(b.version), Dirty: b.dirty}, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return workspace.Doc{}, err
	}
	if st.IsDir() {
		return workspace.Doc{}, fmt.Errorf("read %s: is a directory", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return workspace.Doc{}, err
	}
	return workspace.Doc{Path: path, Text: string(data)}, nil
}

func (w *fakeWS) DirtyBuffers(ctx context.Context) ([]workspace.Buffer, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []workspace.Buffer
	for p, b := range w.bufs {
		if b.dirty {
			out = append(out, workspace.Buffer{Path: p, Version: ptr(b.version)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func (w *fakeWS) Diagnostics(ctx context.Context, paths []string) ([]workspace.FileDiagnostics, error) {
	if w.diags == nil {
		return nil, workspace.ErrUnsupported
	}
	if len(paths) == 0 {
		return w.diags, nil
	}
	var out []workspace.FileDiagnostics
	for _, d := range w.diags {
		for _, p := range paths {
			if d.Path == p {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

func (w *fakeWS) WorkspaceSymbols(ctx context.Context, query string) ([]workspace.Symbol, error) {
	if w.noSymbols {
		return nil, workspace.ErrUnsupported
	}
	var out []workspace.Symbol
	for _, s := range w.symbols {
		if strings.Contains(strings.ToLower(s.Name), strings.ToLower(query)) {
			out = append(out, s)
		}
	}
	return out, nil
}

func (w *fakeWS) ApplyEdit(ctx context.Context, label string, changes []workspace.Change) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refuse != "" {
		return &workspace.NotAppliedError{Reason: w.refuse}
	}
	// Check everything first: all or nothing.
	for _, c := range changes {
		if c.Kind == workspace.ChangeEdit && c.Version != nil {
			b, ok := w.bufs[c.Path]
			if ok && b.version != *c.Version {
				return &workspace.NotAppliedError{Reason: fmt.Sprintf("%s is at version %d, not %d", c.Path, b.version, *c.Version)}
			}
		}
	}
	w.edits = append(w.edits, changes)
	for _, c := range changes {
		switch c.Kind {
		case workspace.ChangeEdit:
			b, ok := w.bufs[c.Path]
			if !ok {
				b = &fakeBuf{}
				w.bufs[c.Path] = b
			}
			b.text, b.dirty = c.NewText, true
			b.version++
		case workspace.ChangeCreate:
			if c.Dir {
				if err := os.MkdirAll(c.Path, 0o755); err != nil {
					return err
				}
				continue
			}
			if _, err := os.Stat(c.Path); err == nil && !c.Overwrite {
				if c.IgnoreIfExists {
					continue
				}
				return &workspace.NotAppliedError{Reason: c.Path + " exists"}
			}
			os.MkdirAll(filepath.Dir(c.Path), 0o755)
			if err := os.WriteFile(c.Path, nil, 0o644); err != nil {
				return err
			}
			w.bufs[c.Path] = &fakeBuf{text: c.NewText, version: 1, dirty: c.NewText != ""}
		case workspace.ChangeRename:
			if _, err := os.Stat(c.NewPath); err == nil && !c.Overwrite {
				return &workspace.NotAppliedError{Reason: c.NewPath + " exists"}
			}
			os.MkdirAll(filepath.Dir(c.NewPath), 0o755)
			if err := os.Rename(c.Path, c.NewPath); err != nil {
				return err
			}
			if b, ok := w.bufs[c.Path]; ok {
				delete(w.bufs, c.Path)
				w.bufs[c.NewPath] = b
			}
		case workspace.ChangeDelete:
			var err error
			if c.Recursive {
				err = os.RemoveAll(c.Path)
			} else {
				err = os.Remove(c.Path)
			}
			if err != nil {
				return err
			}
			delete(w.bufs, c.Path)
		}
	}
	return nil
}

func (w *fakeWS) SaveBuffers(ctx context.Context, paths []string) (workspace.SaveResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	res := workspace.SaveResult{Failed: map[string]string{}}
	for _, p := range paths {
		b, ok := w.bufs[p]
		if !ok {
			res.Failed[p] = "not open"
			continue
		}
		if err := os.WriteFile(p, []byte(b.text), 0o644); err != nil {
			res.Failed[p] = err.Error()
			continue
		}
		b.dirty = false
		res.Saved = append(res.Saved, p)
		w.saved = append(w.saved, p)
	}
	return res, nil
}

// harness is one test's workspace: a temp root, the fake editor, and an Env that records
// permission requests and progress.
type harness struct {
	t        *testing.T
	root     string
	ws       *fakeWS
	env      *Env
	mu       sync.Mutex
	asked    []PermissionRequest
	progress []string
	deny     bool
}

func newHarness(t *testing.T, files map[string]string) *harness {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: root, ws: newFakeWS()}
	for name, text := range files {
		h.write(name, text)
	}
	roots, err := workspace.NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	h.env = &Env{
		Roots: roots,
		WS:    h.ws,
		Permit: func(ctx context.Context, req PermissionRequest) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.asked = append(h.asked, req)
			if h.deny {
				return &ErrDenied{Reason: "the user refused"}
			}
			return nil
		},
		Progress: func(s string) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.progress = append(h.progress, s)
		},
	}
	return h
}

func (h *harness) path(name string) string { return filepath.Join(h.root, filepath.FromSlash(name)) }

func (h *harness) write(name, text string) {
	h.t.Helper()
	p := h.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// run calls tool name from the default registry with args given as a Go value or raw JSON.
func (h *harness) run(name string, args any) Result {
	h.t.Helper()
	return h.runCtx(context.Background(), name, args)
}

func (h *harness) runCtx(ctx context.Context, name string, args any) Result {
	h.t.Helper()
	tool, ok := Default().Lookup(name)
	if !ok {
		h.t.Fatalf("no tool %q", name)
	}
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(a)
		if err != nil {
			h.t.Fatal(err)
		}
		raw = b
	}
	return tool.Run(ctx, h.env, raw)
}

func mustOK(t *testing.T, r Result) Result {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result: %s", r.Output)
	}
	return r
}

func mustErr(t *testing.T, r Result, wants ...string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("expected an error result, got: %s", r.Output)
	}
	for _, w := range wants {
		if !strings.Contains(r.Output, w) {
			t.Fatalf("error %q does not mention %q", r.Output, w)
		}
	}
}

func mustContain(t *testing.T, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Fatalf("output does not contain %q:\n%s", w, s)
		}
	}
}

var _ = errors.Is
var _ fs.FileMode
