package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// dirFS is what a disk edit does to the file system: the host's calls, or the same calls through
// an *os.Root, which resolves every path beneath its root at the moment of the call (openat with
// O_NOFOLLOW per component, or openat2 RESOLVE_BENEATH on Linux) and refuses a symlink that
// leads out of it. The check before each step (noNewLinkAbove) gives the clear message; the root
// closes the instant between that check and the system call.
type dirFS interface {
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	Mkdir(name string, perm fs.FileMode) error
	Remove(name string) error
	RemoveAll(name string) error
	Rename(oldname, newname string) error
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
}

var _ dirFS = (*os.Root)(nil)

// hostFS is the file system without confinement, for a Disk given no roots.
type hostFS struct{}

func (hostFS) Stat(name string) (fs.FileInfo, error)                     { return os.Stat(name) }
func (hostFS) Lstat(name string) (fs.FileInfo, error)                    { return os.Lstat(name) }
func (hostFS) Mkdir(name string, perm fs.FileMode) error                 { return os.Mkdir(name, perm) }
func (hostFS) Remove(name string) error                                  { return os.Remove(name) }
func (hostFS) RemoveAll(name string) error                               { return os.RemoveAll(name) }
func (hostFS) Rename(oldname, newname string) error                      { return os.Rename(oldname, newname) }
func (hostFS) OpenFile(n string, f int, p fs.FileMode) (*os.File, error) { return os.OpenFile(n, f, p) }

// confined opens roots lazily, one *os.Root per workspace root an edit touches.
type confined struct {
	roots  []string
	opened map[string]*os.Root
}

// at returns the file system that p must be reached through and p's name in it. A path in none
// of the roots (a Disk given no roots, or a root's own parent) goes to the host.
func (c *confined) at(p string) (dirFS, string, error) {
	for _, r := range c.roots {
		rel, ok := strings.CutPrefix(p, r+string(filepath.Separator))
		if !ok {
			continue
		}
		root := c.opened[r]
		if root == nil {
			var err error
			if root, err = os.OpenRoot(r); err != nil {
				return nil, "", err
			}
			if c.opened == nil {
				c.opened = map[string]*os.Root{}
			}
			c.opened[r] = root
		}
		return root, rel, nil
	}
	return hostFS{}, p, nil
}

func (c *confined) close() {
	for _, r := range c.opened {
		r.Close()
	}
}
