package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrTooLarge is wrapped by ReadConfined's refusal of a file larger than its cap.
var ErrTooLarge = errors.New("file is larger than the cap")

// ReadConfined reads the regular file name (relative to dir, or absolute inside it) through an
// os.Root of dir, so that a symbolic link anywhere on the way that leads out of dir is refused
// (the error wraps ErrOutsideRoots) instead of followed, while a link that stays inside dir still
// works. max > 0 refuses a file larger than max bytes (wrapping ErrTooLarge) without reading more
// than max+1 of it; a directory, device or FIFO is refused too.
//
// It is the one way agentd reads a file on its own rather than for a tool the model called:
// project and user instruction files, command files, semantic-search hits, checkpoint logs. A
// cloned repository chooses these names, so a link in it must not make agentd read (and send to
// a provider) /proc/self/environ or ~/.ssh. Later readers of the same kind (skills read through
// ReadInRoot; agent definitions are to) use it too, with dir the session's root or the user's own
// configuration directory (~/.config/agentd/…).
func ReadConfined(dir, name string, max int64) ([]byte, error) {
	r, rel, err := openConfined(dir, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(rel)
	if err != nil {
		return nil, confinedErr(dir, rel, err)
	}
	defer f.Close()
	return readRegular(f, filepath.Join(dir, rel), max)
}

// ReadInRoot is ReadConfined for a root already open (one os.Root read many times, as a skill's
// folder is): the regular file name inside r, at most max bytes when max > 0.
func ReadInRoot(r *os.Root, name string, max int64) ([]byte, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRegular(f, filepath.Join(r.Name(), name), max)
}

// readRegular reads f, named where in errors, refusing anything but a regular file and, when
// max > 0, more than max bytes (without reading more than max+1).
func readRegular(f *os.File, where string, max int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", where)
	}
	var src io.Reader = f
	if max > 0 {
		src = io.LimitReader(f, max+1)
	}
	data, err := io.ReadAll(src)
	if err != nil {
		return nil, err
	}
	if max > 0 && int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w (%d bytes)", where, ErrTooLarge, max)
	}
	return data, nil
}

// openConfined opens an os.Root of dir and names name inside it.
func openConfined(dir, name string) (*os.Root, string, error) {
	rel, err := confinedName(dir, name)
	if err != nil {
		return nil, "", err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	return r, rel, nil
}

// StatConfined is os.Stat of name through an os.Root of dir: a link that leads out of dir is
// refused (wrapping ErrOutsideRoots), one inside it is followed. See ReadConfined.
func StatConfined(dir, name string) (fs.FileInfo, error) {
	r, rel, err := openConfined(dir, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	st, err := r.Stat(rel)
	if err != nil {
		return nil, confinedErr(dir, rel, err)
	}
	return st, nil
}

// confinedName turns name into a path relative to dir, refusing one that is not inside it.
func confinedName(dir, name string) (string, error) {
	if filepath.IsAbs(name) {
		rel, err := filepath.Rel(dir, name)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%s is %w (%s)", name, ErrOutsideRoots, dir)
		}
		name = rel
	}
	return name, nil
}

// confinedErr keeps a missing file's error as it is (fs.ErrNotExist) and names every other
// refusal of os.Root that a link leading out caused, which os.Root reports with an unexported
// error: it tells by resolving the path (for the message only; the refusal itself was os.Root's).
func confinedErr(dir, rel string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	full := filepath.Join(dir, rel)
	if real, rerr := filepath.EvalSymlinks(full); rerr == nil || strings.Contains(err.Error(), "escapes") {
		realDir, _ := filepath.EvalSymlinks(dir)
		if rerr != nil || !within(realDir, real) {
			return fmt.Errorf("%s is a link that leads %w (%s); it was not read", full, ErrOutsideRoots, dir)
		}
	}
	return err
}

func within(dir, p string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ReadConfined reads p (absolute, or relative to the cwd) through an os.Root of the root that
// holds it: a link leading out of that root is refused, wrapping ErrOutsideRoots (see the
// package-level ReadConfined).
func (r *Roots) ReadConfined(p string, max int64) ([]byte, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.cwd, p)
	}
	p = filepath.Clean(p)
	root, ok := r.containing(p)
	if !ok {
		return nil, fmt.Errorf("path %q is %w (%s)", p, ErrOutsideRoots, strings.Join(r.dirs, ", "))
	}
	return ReadConfined(root, p, max)
}
