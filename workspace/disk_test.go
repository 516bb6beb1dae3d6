package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// tree returns every file under dir with its content ("/" suffix for directories).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			diffs = append(diffs, "want "+k+"="+v+", got "+got[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, "unexpected "+k)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("tree differs:\n%s", strings.Join(diffs, "\n"))
	}
}

func diskDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(d, "a.txt"), []byte("alpha\n"), 0o600))
	must(os.WriteFile(filepath.Join(d, "b.txt"), []byte("beta\n"), 0o644))
	must(os.MkdirAll(filepath.Join(d, "dir", "inner"), 0o755))
	must(os.WriteFile(filepath.Join(d, "dir", "inner", "c.txt"), []byte("gamma\n"), 0o644))
	must(os.MkdirAll(filepath.Join(d, "empty"), 0o755))
	return d
}

func TestDiskRead(t *testing.T) {
	d := diskDir(t)
	ws := NewDisk()
	ctx := context.Background()
	doc, err := ws.ReadFile(ctx, filepath.Join(d, "a.txt"))
	if err != nil || doc.Text != "alpha\n" || doc.Version != nil || doc.Dirty {
		t.Fatalf("ReadFile = %+v, %v", doc, err)
	}
	if _, err := ws.ReadFile(ctx, filepath.Join(d, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := ws.ReadFile(ctx, filepath.Join(d, "dir")); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("reading a directory: %v", err)
	}
	if _, err := ws.WorkspaceSymbols(ctx, "x"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("WorkspaceSymbols: %v", err)
	}
	if b, err := ws.DirtyBuffers(ctx); err != nil || len(b) != 0 {
		t.Errorf("DirtyBuffers = %v, %v", b, err)
	}
}

func TestDiskApplyEdit(t *testing.T) {
	d := diskDir(t)
	p := func(s string) string { return filepath.Join(d, s) }
	err := NewDisk().ApplyEdit(context.Background(), "several", []Change{
		{Kind: ChangeEdit, Path: p("a.txt"), OldText: "alpha\n", NewText: "ALPHA\n"},
		{Kind: ChangeCreate, Path: p("new/deep/n.txt"), NewText: "new\n"},
		{Kind: ChangeEdit, Path: p("new/deep/n.txt"), OldText: "new\n", NewText: "newer\n"},
		{Kind: ChangeRename, Path: p("b.txt"), NewPath: p("moved/b.txt")},
		{Kind: ChangeDelete, Path: p("dir"), Recursive: true},
		{Kind: ChangeDelete, Path: p("empty")},
		{Kind: ChangeCreate, Path: p("a.txt"), IgnoreIfExists: true, NewText: "ignored"},
		{Kind: ChangeCreate, Path: p("made/by/mkdir"), Dir: true},
		{Kind: ChangeCreate, Path: p("new"), Dir: true}, // exists by now: nothing to do
	})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, tree(t, d), map[string]string{
		"a.txt": "ALPHA\n", "new/": "", "new/deep/": "", "new/deep/n.txt": "newer\n",
		"moved/": "", "moved/b.txt": "beta\n", "made/": "", "made/by/": "", "made/by/mkdir/": "",
	})
	if fi, err := os.Stat(p("a.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the edit lost the file mode: %v, %v", fi.Mode(), err)
	}
}

func TestDiskApplyEditRefusesAndChangesNothing(t *testing.T) {
	d := diskDir(t)
	p := func(s string) string { return filepath.Join(d, s) }
	before := tree(t, d)
	for _, c := range []struct {
		name    string
		changes []Change
		reason  string
	}{
		{"stale", []Change{
			{Kind: ChangeCreate, Path: p("first.txt"), NewText: "x"},
			{Kind: ChangeEdit, Path: p("a.txt"), OldText: "what the model thought\n", NewText: "y"},
		}, "changed on disk"},
		{"create over existing", []Change{{Kind: ChangeCreate, Path: p("b.txt"), NewText: "x"}}, "already exists"},
		{"rename onto existing", []Change{{Kind: ChangeRename, Path: p("a.txt"), NewPath: p("b.txt")}}, "already exists"},
		{"rename missing", []Change{{Kind: ChangeRename, Path: p("nope"), NewPath: p("x")}}, "does not exist"},
		{"mkdir over a file", []Change{{Kind: ChangeCreate, Path: p("a.txt"), Dir: true}}, "not a directory"},
		{"delete missing", []Change{{Kind: ChangeDelete, Path: p("nope")}}, "does not exist"},
		{"delete non-empty", []Change{{Kind: ChangeDelete, Path: p("dir")}}, "not empty"},
		{"edit deleted", []Change{
			{Kind: ChangeDelete, Path: p("a.txt")},
			{Kind: ChangeEdit, Path: p("a.txt"), OldText: "alpha\n", NewText: "x"},
		}, "does not exist"},
	} {
		err := NewDisk().ApplyEdit(context.Background(), c.name, c.changes)
		var na *NotAppliedError
		if !errors.As(err, &na) || !strings.Contains(na.Reason, c.reason) {
			t.Errorf("%s: err = %v, want a NotAppliedError saying %q", c.name, err, c.reason)
		}
		sameTree(t, tree(t, d), before)
	}
}

func TestDiskApplyEditOverwrite(t *testing.T) {
	d := diskDir(t)
	p := func(s string) string { return filepath.Join(d, s) }
	err := NewDisk().ApplyEdit(context.Background(), "ow", []Change{
		{Kind: ChangeCreate, Path: p("a.txt"), Overwrite: true, NewText: "fresh\n"},
		{Kind: ChangeRename, Path: p("b.txt"), NewPath: p("dir/inner/c.txt"), Overwrite: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, tree(t, d), map[string]string{
		"a.txt": "fresh\n", "dir/": "", "dir/inner/": "", "dir/inner/c.txt": "beta\n", "empty/": "",
	})
}

func TestDiskApplyEditRollsBack(t *testing.T) {
	changes := func(d string) []Change {
		p := func(s string) string { return filepath.Join(d, s) }
		return []Change{
			{Kind: ChangeEdit, Path: p("a.txt"), OldText: "alpha\n", NewText: "ALPHA\n"},
			{Kind: ChangeCreate, Path: p("x/y/z.txt"), NewText: "z"},
			{Kind: ChangeCreate, Path: p("b.txt"), Overwrite: true, NewText: "B"},
			{Kind: ChangeRename, Path: p("dir/inner/c.txt"), NewPath: p("c.txt")},
			{Kind: ChangeDelete, Path: p("dir"), Recursive: true},
			{Kind: ChangeCreate, Path: p("m/n"), Dir: true},
		}
	}
	for failAt := range 6 {
		d := diskDir(t)
		before := tree(t, d)
		testHookAfterStep = func(i int) error {
			if i == failAt {
				return errors.New("disk full")
			}
			return nil
		}
		err := NewDisk().ApplyEdit(context.Background(), "batch", changes(d))
		testHookAfterStep = nil
		if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "nothing was changed") {
			t.Fatalf("fail at %d: err = %v", failAt, err)
		}
		sameTree(t, tree(t, d), before)
	}
}

// changesThroughDir is one change of each kind whose path runs through dir/ (relative to the
// project: see Change.in), for the tests that make dir/ lead out of the project.
var changesThroughDir = []Change{
	{Kind: ChangeCreate, Path: "dir/inner/new.txt", NewText: "HACKED"},
	{Kind: ChangeCreate, Path: "dir/inner/made", Dir: true},
	{Kind: ChangeEdit, Path: "dir/inner/c.txt", OldText: "gamma\n", NewText: "HACKED"},
	{Kind: ChangeDelete, Path: "dir/inner/c.txt"},
	{Kind: ChangeRename, Path: "dir/inner/c.txt", NewPath: "moved.txt"},
	{Kind: ChangeRename, Path: "b.txt", NewPath: "dir/inner/b.txt"},
}

// in is c with its paths under the project dir d.
func (c Change) in(d string) Change {
	c.Path = filepath.Join(d, c.Path)
	if c.NewPath != "" {
		c.NewPath = filepath.Join(d, c.NewPath)
	}
	return c
}

// outsideDir is a directory outside the project shaped like its dir/ (inner/c.txt), where a
// change that escapes would land.
func outsideDir(t *testing.T) string {
	out := t.TempDir()
	os.MkdirAll(filepath.Join(out, "inner"), 0o755)
	os.WriteFile(filepath.Join(out, "inner", "c.txt"), []byte("gamma\n"), 0o644)
	return out
}

// A directory swapped for a symlink between the steps of an edit (or between the check and the
// steps) does not carry a later step outside: each step first checks that no directory above
// its paths is a symlink (Disk is given real paths, Roots.Resolve's), and the edit rolls back.
func TestDiskApplyEditRefusesASwappedDirectory(t *testing.T) {
	for _, c := range changesThroughDir {
		d, out := diskDir(t), outsideDir(t)
		outBefore := tree(t, out)
		c = c.in(d)
		testHookAfterStep = func(i int) error {
			if i == 0 {
				if err := os.Rename(filepath.Join(d, "dir"), filepath.Join(d, "dir.orig")); err != nil {
					return err
				}
				return os.Symlink(out, filepath.Join(d, "dir"))
			}
			return nil
		}
		err := NewDisk().ApplyEdit(context.Background(), "swap", []Change{{Kind: ChangeEdit, Path: filepath.Join(d, "a.txt"), OldText: "alpha\n", NewText: "ALPHA\n"}, c})
		testHookAfterStep = nil
		if err == nil || !strings.Contains(err.Error(), "symlink") {
			t.Errorf("%v %s: err = %v, want a refusal naming the symlink", c.Kind, c.Path, err)
		}
		sameTree(t, tree(t, out), outBefore)
		if b, _ := os.ReadFile(filepath.Join(d, "a.txt")); string(b) != "alpha\n" {
			t.Errorf("a.txt = %q, want the first step rolled back", b)
		}
	}
}

// TestDiskGivenRootsRefusesALinkOutInTheLastInstant covers the instant between the check before a
// step and its system call: the symlink out of the root is already there when the edit starts
// (so the check, which allows links that predate the edit, lets it by), and only the *os.Root the
// Disk reaches its roots through stops the step.
func TestDiskGivenRootsRefusesALinkOutInTheLastInstant(t *testing.T) {
	for _, c := range changesThroughDir {
		d, out := diskDir(t), outsideDir(t)
		if err := os.RemoveAll(filepath.Join(d, "dir")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(out, filepath.Join(d, "dir")); err != nil {
			t.Fatal(err)
		}
		outBefore := tree(t, out)
		c = c.in(d)
		err := NewDisk(d).ApplyEdit(context.Background(), "link", []Change{{Kind: ChangeEdit, Path: filepath.Join(d, "a.txt"), OldText: "alpha\n", NewText: "ALPHA\n"}, c})
		if err == nil {
			t.Errorf("%v %s: applied through a link out of the root", c.Kind, c.Path)
		}
		sameTree(t, tree(t, out), outBefore)
		if b, _ := os.ReadFile(filepath.Join(d, "a.txt")); string(b) != "alpha\n" {
			t.Errorf("%v: a.txt = %q, want the first step rolled back", c.Kind, b)
		}
	}
}

// TestDiskGivenRootsStillEdits checks the confined path does what the host path did.
func TestDiskGivenRootsStillEdits(t *testing.T) {
	d := diskDir(t)
	err := NewDisk(d).ApplyEdit(context.Background(), "all", []Change{
		{Kind: ChangeEdit, Path: filepath.Join(d, "a.txt"), OldText: "alpha\n", NewText: "ALPHA\n"},
		{Kind: ChangeCreate, Path: filepath.Join(d, "new", "deep", "n.txt"), NewText: "new\n"},
		{Kind: ChangeRename, Path: filepath.Join(d, "b.txt"), NewPath: filepath.Join(d, "dir", "b.txt")},
		{Kind: ChangeDelete, Path: filepath.Join(d, "dir", "inner", "c.txt")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"a.txt": "ALPHA\n", "new/deep/n.txt": "new\n", "dir/b.txt": "beta\n"} {
		if b, err := os.ReadFile(filepath.Join(d, p)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(d, "a.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a.txt mode = %v, %v; want 0600 kept", fi.Mode(), err)
	}
	for _, p := range []string{"b.txt", "dir/inner/c.txt"} {
		if _, err := os.Lstat(filepath.Join(d, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	ents, _ := os.ReadDir(d)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".agentd-") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}
