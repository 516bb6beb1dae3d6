package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Roots are the directories a session may touch: its cwd plus additionalDirectories. Every path a
// tool names goes through Resolve before it reaches the port.
type Roots struct {
	cwd  string
	dirs []string // cleaned, symlinks evaluated; dirs[0] is the cwd
}

// NewRoots checks that cwd and every additional directory are absolute, existing directories.
func NewRoots(cwd string, additional ...string) (*Roots, error) {
	r := &Roots{}
	for i, d := range append([]string{cwd}, additional...) {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("%q is not an absolute path", d)
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(d))
		if err != nil {
			return nil, fmt.Errorf("root %q: %w", d, err)
		}
		st, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("root %q: %w", d, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("root %q is not a directory", d)
		}
		if i == 0 {
			r.cwd = real
		}
		if !slices.Contains(r.dirs, real) {
			r.dirs = append(r.dirs, real)
		}
	}
	return r, nil
}

// Cwd is the session's working directory (symlinks evaluated).
func (r *Roots) Cwd() string { return r.cwd }

// Dirs lists the roots, the cwd first.
func (r *Roots) Dirs() []string { return slices.Clone(r.dirs) }

// ErrOutsideRoots is wrapped by every containment refusal.
var ErrOutsideRoots = errors.New("outside the workspace roots")

// Resolve turns a path a tool named (absolute, or relative to the cwd) into a clean absolute path
// inside the roots, following symlinks of the part that exists so a link cannot lead out. With
// forWrite, paths in a .git directory are refused too. The error says why, for the model.
func (r *Roots) Resolve(p string, forWrite bool) (string, error) {
	if p == "" {
		return "", errors.New("path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		return "", fmt.Errorf("path %q: ~ is not expanded; use a path inside the workspace (%s)", p, r.cwd)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.cwd, abs)
	}
	abs = filepath.Clean(abs)
	if _, ok := r.containing(abs); !ok {
		return "", fmt.Errorf("path %q is %w (%s)", p, ErrOutsideRoots, strings.Join(r.dirs, ", "))
	}
	real, err := evalExisting(abs)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	if _, ok := r.containing(real); !ok {
		return "", fmt.Errorf("path %q leads through a symlink to %q, %w", p, real, ErrOutsideRoots)
	}
	if forWrite && inGitDir(real) {
		return "", fmt.Errorf("path %q is inside a .git directory, which agentd never writes", p)
	}
	return real, nil
}

// Rel returns p relative to the root that holds it, for display; p itself when none does.
func (r *Roots) Rel(p string) string {
	root, ok := r.containing(p)
	if !ok {
		return p
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	if len(r.dirs) > 1 && root != r.cwd {
		return filepath.Join(filepath.Base(root), rel)
	}
	return rel
}

func (r *Roots) containing(p string) (string, bool) {
	for _, d := range r.dirs {
		if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
			return d, true
		}
	}
	return "", false
}

// maxLinks bounds symlink chains, as the kernel's ELOOP does.
const maxLinks = 40

// evalExisting evaluates symlinks in the longest existing prefix of p and appends the rest. A
// dangling symlink (one whose target does not exist yet) is followed by hand: writing through it
// would create its target, so the target is what must be contained.
func evalExisting(p string) (string, error) { return evalLinks(p, 0) }

func evalLinks(p string, depth int) (string, error) {
	if depth > maxLinks {
		return "", errors.New("too many levels of symbolic links")
	}
	rest := ""
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(cur)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				// The link's directory exists (Lstat reached it); resolve it for real before
				// joining, so a ".." in the target is taken from where the link really is.
				dir, err := filepath.EvalSymlinks(filepath.Dir(cur))
				if err != nil {
					return "", err
				}
				target = filepath.Join(dir, target)
			}
			return evalLinks(filepath.Join(target, rest), depth+1)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// inGitDir matches .git in any case: on case-insensitive file systems (macOS, Windows) ".GIT" is
// the same directory.
func inGitDir(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}
