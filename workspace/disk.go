package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"unsafe"
)

// Disk is the port on the file system itself: what `agentd exec` uses, and what the editor
// bridge falls back to for a client that serves no reads or edits. It has no buffers, so every
// Doc has a nil Version and an edit's version check is that OldText still matches the disk.
type Disk struct {
	roots []string
}

// NewDisk returns the disk implementation of Workspace. Given the workspace roots (real paths,
// as Roots.Dirs gives them), every change it applies beneath one of them is made through an
// *os.Root on that root, so that a symlink swapped in after the paths were resolved cannot carry
// a write, a move or a deletion outside it.
func NewDisk(roots ...string) *Disk { return &Disk{roots: roots} }

var _ Workspace = (*Disk)(nil)

// ReadFile reads the file from disk.
func (*Disk) ReadFile(ctx context.Context, path string) (Doc, error) {
	if err := ctx.Err(); err != nil {
		return Doc{}, err
	}
	b, _, isDir, err := ReadInto(nil, path, math.MaxInt64)
	if isDir {
		return Doc{}, fmt.Errorf("%s is a directory, not a file", path)
	}
	if err != nil {
		return Doc{}, err
	}
	if len(b) == 0 {
		return Doc{Path: path}, nil
	}
	// b is never written again: the text shares it instead of copying it.
	return Doc{Path: path, Text: unsafe.String(&b[0], len(b))}, nil
}

// DirtyBuffers is empty: the disk has no unsaved buffers.
func (*Disk) DirtyBuffers(context.Context) ([]Buffer, error) { return nil, nil }

// Diagnostics is unsupported: there is no language server behind the disk, and an empty answer
// would read as "no problems" (and make the engine wait for diagnostics that never come).
func (*Disk) Diagnostics(context.Context, []string) ([]FileDiagnostics, error) {
	return nil, ErrUnsupported
}

// WorkspaceSymbols is unsupported; tools fall back to a scan.
func (*Disk) WorkspaceSymbols(context.Context, string) ([]Symbol, error) {
	return nil, ErrUnsupported
}

// SaveBuffers has nothing to do: every edit is already on disk.
func (*Disk) SaveBuffers(context.Context, []string) (SaveResult, error) { return SaveResult{}, nil }

// ApplyEdit applies all changes or none. It first checks every precondition against a staged
// view of the files (an edit's OldText must still be on disk, a create must not clobber, a rename
// or delete needs its source), then performs the steps, each file written to a temporary file
// and renamed into place; whatever it replaces is kept aside and put back if a later step fails.
func (d *Disk) ApplyEdit(ctx context.Context, label string, changes []Change) error {
	links := linksAbove(changes)
	st := &stage{over: map[string]*vfile{}}
	for i, c := range changes {
		if err := st.check(c); err != nil {
			var na *NotAppliedError
			if errors.As(err, &na) {
				return err
			}
			return fmt.Errorf("change %d (%s): %w", i+1, c.Path, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	tx := &txn{links: links, fs: confined{roots: d.roots}}
	defer tx.fs.close()
	for i, s := range st.steps {
		err := tx.do(s)
		if err == nil && testHookAfterStep != nil {
			err = testHookAfterStep(i)
		}
		if err != nil {
			if rerr := tx.rollback(); rerr != nil {
				return fmt.Errorf("%s: %w (and rolling back failed: %v)", label, err, rerr)
			}
			return fmt.Errorf("%s: %w (nothing was changed)", label, err)
		}
	}
	tx.commit()
	return nil
}

// testHookAfterStep lets tests fail a step after it ran, to exercise the rollback.
var testHookAfterStep func(step int) error

// vfile is the staged state of one path.
type vfile struct {
	exists, dir bool
	text        string
	gone        bool // a directory moved or deleted earlier in the edit: nothing below it is known
}

type stage struct {
	over  map[string]*vfile
	steps []step
}

type step struct {
	c    Change
	skip bool
}

func (st *stage) lookup(p string) (*vfile, error) {
	if v, ok := st.over[p]; ok {
		return v, nil
	}
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		if v, ok := st.over[dir]; ok && v.gone {
			return nil, fmt.Errorf("%s lies under a directory moved or deleted earlier in the same edit", p)
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &vfile{}, nil
	}
	if err != nil {
		return nil, err
	}
	v := &vfile{exists: true, dir: fi.IsDir()}
	if !v.dir {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		v.text = string(b)
	}
	return v, nil
}

func notApplied(format string, args ...any) error {
	return &NotAppliedError{Reason: fmt.Sprintf(format, args...)}
}

func (st *stage) check(c Change) error {
	v, err := st.lookup(c.Path)
	if err != nil {
		return err
	}
	switch c.Kind {
	case ChangeEdit:
		if !v.exists {
			return notApplied("%s does not exist", c.Path)
		}
		if v.dir {
			return notApplied("%s is a directory", c.Path)
		}
		if v.text != c.OldText {
			return notApplied("%s changed on disk since it was read; read it again", c.Path)
		}
		st.over[c.Path] = &vfile{exists: true, text: c.NewText}
	case ChangeCreate:
		if c.Dir {
			if v.exists && !v.dir {
				return notApplied("%s exists and is not a directory", c.Path)
			}
			if v.exists {
				st.steps = append(st.steps, step{c: c, skip: true})
				return nil
			}
			st.over[c.Path] = &vfile{exists: true, dir: true}
			break
		}
		if v.exists && !c.Overwrite {
			if c.IgnoreIfExists {
				st.steps = append(st.steps, step{c: c, skip: true})
				return nil
			}
			return notApplied("%s already exists", c.Path)
		}
		if v.dir {
			return notApplied("%s is a directory", c.Path)
		}
		st.over[c.Path] = &vfile{exists: true, text: c.NewText}
	case ChangeRename:
		if !v.exists {
			return notApplied("%s does not exist", c.Path)
		}
		if c.NewPath == "" {
			return errors.New("rename without a destination")
		}
		dst, err := st.lookup(c.NewPath)
		if err != nil {
			return err
		}
		if dst.exists && !c.Overwrite {
			if c.IgnoreIfExists {
				st.steps = append(st.steps, step{c: c, skip: true})
				return nil
			}
			return notApplied("%s already exists", c.NewPath)
		}
		if dst.dir || (v.dir && dst.exists) {
			return notApplied("%s would replace a directory", c.NewPath)
		}
		if v.dir {
			st.over[c.Path] = &vfile{gone: true}
			st.over[c.NewPath] = &vfile{gone: true}
		} else {
			st.over[c.Path] = &vfile{}
			st.over[c.NewPath] = &vfile{exists: true, text: v.text}
		}
	case ChangeDelete:
		if !v.exists {
			return notApplied("%s does not exist", c.Path)
		}
		if v.dir {
			if !c.Recursive {
				entries, err := os.ReadDir(c.Path)
				if err != nil {
					return err
				}
				if len(entries) > 0 {
					return notApplied("%s is a directory that is not empty", c.Path)
				}
			}
			st.over[c.Path] = &vfile{gone: true}
		} else {
			st.over[c.Path] = &vfile{}
		}
	default:
		return fmt.Errorf("unknown change kind %d", c.Kind)
	}
	st.steps = append(st.steps, step{c: c})
	return nil
}

// txn performs steps and remembers how to undo each.
type txn struct {
	links   map[string]bool // symlinks above the paths when the edit began
	fs      confined
	undo    []func() error
	backups []string // removed on commit
}

func (tx *txn) rollback() error {
	var errs []error
	for i := len(tx.undo) - 1; i >= 0; i-- {
		if err := tx.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (tx *txn) commit() {
	for _, b := range tx.backups {
		if f, name, err := tx.fs.at(b); err == nil {
			f.RemoveAll(name)
		}
	}
}

// rename moves oldp to newp through the root that holds both; a move between two roots goes
// through the host, after the check before the step.
func (tx *txn) rename(oldp, newp string) error {
	fo, no, err := tx.fs.at(oldp)
	if err != nil {
		return err
	}
	fn, nn, err := tx.fs.at(newp)
	if err != nil {
		return err
	}
	if fo != fn {
		return os.Rename(oldp, newp)
	}
	return fo.Rename(no, nn)
}

// op runs fn on p's file system and name.
func (tx *txn) op(p string, fn func(f dirFS, name string) error) error {
	f, name, err := tx.fs.at(p)
	if err != nil {
		return err
	}
	return fn(f, name)
}

// aside moves p out of the way (same directory, so the rename is atomic) and registers its
// restoration.
func (tx *txn) aside(p string) error {
	b := sideName(p, "bak")
	if err := tx.rename(p, b); err != nil {
		return err
	}
	tx.backups = append(tx.backups, b)
	tx.undo = append(tx.undo, func() error {
		tx.op(p, func(f dirFS, name string) error { return f.RemoveAll(name) })
		return tx.rename(b, p)
	})
	return nil
}

func sideName(p, kind string) string {
	var r [6]byte
	rand.Read(r[:])
	return filepath.Join(filepath.Dir(p), ".agentd-"+filepath.Base(p)+"."+hex.EncodeToString(r[:])+"."+kind)
}

// mkdirs creates p's missing parents and registers their removal.
func (tx *txn) mkdirs(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if tx.op(d, func(f dirFS, name string) error { _, err := f.Stat(name); return err }) == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := tx.op(d, func(f dirFS, name string) error { return f.Mkdir(name, 0o755) }); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		tx.undo = append(tx.undo, func() error { return tx.op(d, func(f dirFS, name string) error { return f.Remove(name) }) })
	}
	return nil
}

// writeFile writes text to p through a temporary file renamed into place, keeping the old file
// aside when there is one.
func (tx *txn) writeFile(p, text string) error {
	f, name, err := tx.fs.at(p)
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := f.Stat(name); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp := sideName(p, "tmp")
	ft, tmpName, err := tx.fs.at(tmp)
	if err != nil {
		return err
	}
	if err := writeNew(ft, tmpName, text, mode); err != nil {
		ft.Remove(tmpName)
		return err
	}
	if _, err := f.Lstat(name); err == nil {
		if err := tx.aside(p); err != nil {
			ft.Remove(tmpName)
			return err
		}
	}
	if err := tx.rename(tmp, p); err != nil {
		ft.Remove(tmpName)
		return err
	}
	tx.undo = append(tx.undo, func() error {
		if err := f.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
	return nil
}

func (tx *txn) do(s step) error {
	if s.skip {
		return nil
	}
	c := s.c
	for _, p := range []string{c.Path, c.NewPath} {
		if p == "" {
			continue
		}
		if err := tx.noNewLinkAbove(p); err != nil {
			return err
		}
	}
	switch c.Kind {
	case ChangeEdit:
		return tx.writeFile(c.Path, c.NewText)
	case ChangeCreate:
		if c.Dir {
			return tx.mkdirs(c.Path)
		}
		if err := tx.mkdirs(filepath.Dir(c.Path)); err != nil {
			return err
		}
		return tx.writeFile(c.Path, c.NewText)
	case ChangeRename:
		if err := tx.mkdirs(filepath.Dir(c.NewPath)); err != nil {
			return err
		}
		if tx.op(c.NewPath, func(f dirFS, name string) error { _, err := f.Lstat(name); return err }) == nil {
			if err := tx.aside(c.NewPath); err != nil {
				return err
			}
		}
		if err := tx.rename(c.Path, c.NewPath); err != nil {
			return err
		}
		tx.undo = append(tx.undo, func() error { return tx.rename(c.NewPath, c.Path) })
		return nil
	case ChangeDelete:
		return tx.aside(c.Path)
	}
	return fmt.Errorf("unknown change kind %d", c.Kind)
}

// noNewLinkAbove refuses a path with a symlink among the directories above it that was not a
// symlink when the edit began (a system link such as macOS's /var stays allowed). The paths Disk
// is given were resolved by Roots.Resolve to real paths, so a symlink there was swapped in since
// and could carry the step outside the roots. The check runs just before each step: what
// remains is the instant between it and the step.
func (tx *txn) noNewLinkAbove(p string) error {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&fs.ModeSymlink != 0 && !tx.links[d] {
			return fmt.Errorf("%s is now a symlink, so %s may lie outside the workspace", d, p)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// linksAbove records the symlinks among the directories above the changes' paths.
func linksAbove(changes []Change) map[string]bool {
	links := map[string]bool{}
	for _, c := range changes {
		for _, p := range []string{c.Path, c.NewPath} {
			if p == "" {
				continue
			}
			for d := filepath.Dir(p); ; d = filepath.Dir(d) {
				if fi, err := os.Lstat(d); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
					links[d] = true
				}
				if filepath.Dir(d) == d {
					break
				}
			}
		}
	}
	return links
}

// writeNew writes text to a file that must not exist yet (a fresh temporary name).
func writeNew(f dirFS, name, text string, mode fs.FileMode) error {
	w, err := f.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = w.WriteString(text)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
