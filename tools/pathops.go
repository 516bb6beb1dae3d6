package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// resolveEntry contains a path whose last element is acted on itself (renamed, moved, deleted):
// the parent is resolved through symlinks, the last element is not, so deleting a symlink deletes
// the link and never its target.
func resolveEntry(env *Env, field, p string) (string, *Result) {
	full, bad := resolve(env, field, p, true)
	if bad != nil {
		return "", bad
	}
	if slices.Contains(env.Roots.Dirs(), full) {
		r := Errorf("field %s: %s is a workspace root, which agentd never moves or deletes", field, p)
		return "", &r
	}
	clean := p
	if !filepath.IsAbs(clean) {
		clean = filepath.Join(env.Roots.Cwd(), clean)
	}
	clean = filepath.Clean(clean)
	parent, bad := resolve(env, field, filepath.Dir(clean), true)
	if bad != nil {
		return "", bad
	}
	abs := filepath.Join(parent, filepath.Base(clean))
	if slices.Contains(env.Roots.Dirs(), abs) {
		r := Errorf("field %s: %s is a workspace root, which agentd never moves or deletes", field, p)
		return "", &r
	}
	return abs, nil
}

// countTree counts the files under dir, for permission titles and results.
func countTree(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

func describeEntry(abs string) string {
	st, err := os.Lstat(abs)
	switch {
	case err != nil:
		return "path"
	case st.Mode()&os.ModeSymlink != 0:
		return "symlink"
	case st.IsDir():
		return fmt.Sprintf("directory (%s)", plural(countTree(abs), "file"))
	}
	return "file"
}
