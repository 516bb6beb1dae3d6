package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layout makes a root and a sibling "outside" directory, both symlink-free (t.TempDir may sit
// under a symlinked /tmp, so paths are evaluated).
func layout(t *testing.T) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "sub"), filepath.Join(root, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, text := range map[string]string{
		filepath.Join(root, "a.txt"):        "a",
		filepath.Join(root, "sub", "b.txt"): "b",
		filepath.Join(outside, "secret"):    "s",
		filepath.Join(root, ".git", "HEAD"): "ref: refs/heads/main\n",
	} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestResolveAccepts(t *testing.T) {
	root, _ := layout(t)
	symlink(t, "sub", filepath.Join(root, "inlink"))                                      // relative, inside
	symlink(t, filepath.Join(root, "sub", "new.txt"), filepath.Join(root, "dangling-in")) // dangling, inside
	r, err := NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in       string
		forWrite bool
		want     string
	}{
		{"a.txt", true, filepath.Join(root, "a.txt")},
		{"./sub/../a.txt", true, filepath.Join(root, "a.txt")},
		{filepath.Join(root, "sub", "b.txt"), true, filepath.Join(root, "sub", "b.txt")},
		{"sub/new/deeper.txt", true, filepath.Join(root, "sub", "new", "deeper.txt")},
		{"inlink/b.txt", true, filepath.Join(root, "sub", "b.txt")},
		{"dangling-in", true, filepath.Join(root, "sub", "new.txt")},
		{".", false, root},
		{".git/HEAD", false, filepath.Join(root, ".git", "HEAD")}, // reading .git is fine
		{".gitignore", true, filepath.Join(root, ".gitignore")},
		{"~notatilde", true, filepath.Join(root, "~notatilde")},
	} {
		got, err := r.Resolve(c.in, c.forWrite)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q, %v) = %q, %v; want %q", c.in, c.forWrite, got, err, c.want)
		}
	}
}

func TestResolveRefuses(t *testing.T) {
	root, outside := layout(t)
	symlink(t, outside, filepath.Join(root, "outdir"))                                // dir link out
	symlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "outfile"))      // file link out
	symlink(t, filepath.Join(outside, "not-yet"), filepath.Join(root, "dangling"))    // dangling out
	symlink(t, "../../outside/not-yet", filepath.Join(root, "sub", "rel-dangling"))   // relative dangling out
	symlink(t, filepath.Join(outside, "newdir"), filepath.Join(root, "dangling-dir")) // dangling dir out
	symlink(t, filepath.Join(root, "loop2"), filepath.Join(root, "loop1"))            // a loop
	symlink(t, filepath.Join(root, "loop1"), filepath.Join(root, "loop2"))
	symlink(t, ".git", filepath.Join(root, "gitlink")) // a way into .git under another name
	r, err := NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in       string
		forWrite bool
		why      string // a word the message must hold
		outside  bool   // wraps ErrOutsideRoots
	}{
		{"", false, "empty", false},
		{"../outside/secret", false, "outside", true},
		{"sub/../../outside/secret", true, "outside", true},
		{filepath.Join(outside, "secret"), false, "outside", true},
		{"/etc/passwd", false, "outside", true},
		{"outdir/secret", false, "symlink", true},
		{"outfile", false, "symlink", true},
		{"dangling", true, "symlink", true},
		{"sub/rel-dangling", true, "symlink", true},
		{"dangling-dir/x/y.txt", true, "symlink", true},
		{"loop1", true, "links", false},
		{"~", false, "~", false},
		{"~/.ssh/id_rsa", false, "~", false},
		{"a\x00.txt", false, "NUL", false},
		{".git/config", true, ".git", false},
		{"sub/.git/hooks/pre-commit", true, ".git", false},
		{filepath.Join(root, ".git"), true, ".git", false},
		{".GIT/config", true, ".git", false},
		{"gitlink/config", true, ".git", false},
	} {
		got, err := r.Resolve(c.in, c.forWrite)
		if err == nil {
			t.Errorf("Resolve(%q, %v) = %q, want a refusal", c.in, c.forWrite, got)
			continue
		}
		if !strings.Contains(err.Error(), c.why) {
			t.Errorf("Resolve(%q): %q does not say %q", c.in, err, c.why)
		}
		if errors.Is(err, ErrOutsideRoots) != c.outside {
			t.Errorf("Resolve(%q): errors.Is(ErrOutsideRoots) = %v, want %v (%v)", c.in, !c.outside, c.outside, err)
		}
	}
}

func TestRootsAdditional(t *testing.T) {
	root, outside := layout(t)
	r, err := NewRoots(root, outside, root)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Dirs(); len(got) != 2 || got[0] != root || got[1] != outside {
		t.Errorf("Dirs = %v, want [%s %s] (duplicates dropped, cwd first)", got, root, outside)
	}
	p, err := r.Resolve(filepath.Join(outside, "secret"), true)
	if err != nil {
		t.Fatalf("a file of an additional directory was refused: %v", err)
	}
	if got := r.Rel(p); got != filepath.Join("outside", "secret") {
		t.Errorf("Rel(%q) = %q, want outside/secret", p, got)
	}
	if got := r.Rel(filepath.Join(root, "sub", "b.txt")); got != filepath.Join("sub", "b.txt") {
		t.Errorf("Rel = %q", got)
	}
	if got := r.Rel("/elsewhere/x"); got != "/elsewhere/x" {
		t.Errorf("Rel of an outside path = %q, want it unchanged", got)
	}
	if r.Cwd() != root {
		t.Errorf("Cwd = %q", r.Cwd())
	}
}

func TestNewRootsRefuses(t *testing.T) {
	root, _ := layout(t)
	for _, c := range []struct{ cwd, why string }{
		{"relative/dir", "absolute"},
		{filepath.Join(root, "missing"), "no such file"},
		{filepath.Join(root, "a.txt"), "not a directory"},
	} {
		if _, err := NewRoots(c.cwd); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("NewRoots(%q) = %v, want an error saying %q", c.cwd, err, c.why)
		}
	}
}
