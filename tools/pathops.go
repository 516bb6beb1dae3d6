package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentd-dev/agentd/workspace"
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

func doMove(ctx context.Context, env *Env, dstField, src, dst string, overwrite bool, verb string) Result {
	// The destination's last element is checked again: a name joined to a directory may be a
	// symlink or a .git entry.
	dst, bad := resolveEntry(env, dstField, dst)
	if bad != nil {
		return *bad
	}
	sname, dname := rel(env, src), rel(env, dst)
	sst, err := os.Lstat(src)
	if err != nil {
		return Errorf("field path: %s does not exist", sname)
	}
	if src == dst {
		return Errorf("field %s: %s is already called that", dstField, sname)
	}
	if sst.IsDir() && strings.HasPrefix(dst, src+string(filepath.Separator)) {
		return Errorf("field %s: cannot move %s into itself", dstField, sname)
	}
	if dstat, err := os.Lstat(dst); err == nil {
		if !overwrite {
			return Errorf("field %s: %s already exists; choose another name or set overwrite:true", dstField, dname)
		}
		if dstat.IsDir() {
			return Errorf("field %s: %s is an existing directory, which is never overwritten", dstField, dname)
		}
	}
	what := describeEntry(src)
	title := fmt.Sprintf("%s %s %s to %s", verb, what, sname, dname)
	if r := permit(ctx, env, PermissionRequest{Title: title, Kind: "move", Paths: []string{src, dst}}); r != nil {
		return *r
	}
	change := workspace.Change{Kind: workspace.ChangeRename, Path: src, NewPath: dst, Overwrite: overwrite}
	if r := applyEdit(ctx, env, title, []workspace.Change{change}); r != nil {
		return *r
	}
	past := map[string]string{"Rename": "Renamed", "Move": "Moved"}[verb]
	return Result{Output: fmt.Sprintf("%s %s %s to %s.", past, what, sname, dname), Locations: []Location{{Path: dst}}}
}
