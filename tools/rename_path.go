package tools

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentd-dev/agentd/workspace"
)

//go:embed rename_path.md
var renamePathDoc string

//go:embed move_path.md
var movePathDoc string

type renamePathIn struct {
	Path      string `json:"path" jsonschema:"description=File or directory to rename,maxLength=4096"`
	NewName   string `json:"new_name" jsonschema:"description=New base name (no slashes),maxLength=255"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"description=Replace an existing file of that name"`
}

func (in renamePathIn) title() string {
	if in.Path == "" || in.NewName == "" {
		return ""
	}
	return fmt.Sprintf("Rename %s to %s", in.Path, in.NewName)
}

type movePathIn struct {
	Path        string `json:"path" jsonschema:"description=File or directory to move,maxLength=4096"`
	Destination string `json:"destination" jsonschema:"description=New path, or an existing directory to move into,maxLength=4096"`
	Overwrite   bool   `json:"overwrite,omitempty" jsonschema:"description=Replace an existing file at the destination"`
}

func (in movePathIn) title() string {
	if in.Path == "" || in.Destination == "" {
		return ""
	}
	return fmt.Sprintf("Move %s to %s", in.Path, in.Destination)
}

// RenamePath is the rename_path tool.
var RenamePath = New(Spec{Name: "rename_path", Description: renamePathDoc, Effect: EffectWrite, Kind: "move", Title: "Rename"}, renamePath)

// MovePath is the move_path tool.
var MovePath = New(Spec{Name: "move_path", Description: movePathDoc, Effect: EffectWrite, Kind: "move", Title: "Move"}, movePath)

func renamePath(ctx context.Context, env *Env, in renamePathIn) Result {
	if in.NewName == "" || in.NewName == "." || in.NewName == ".." || strings.ContainsAny(in.NewName, `/\`) || strings.ContainsRune(in.NewName, 0) {
		return Errorf("field new_name must be a plain file name without slashes (got %q); use move_path to move to another directory", in.NewName)
	}
	src, bad := resolveEntry(env, "path", in.Path)
	if bad != nil {
		return *bad
	}
	return doMove(ctx, env, "new_name", src, filepath.Join(filepath.Dir(src), in.NewName), in.Overwrite, "Rename")
}

func movePath(ctx context.Context, env *Env, in movePathIn) Result {
	src, bad := resolveEntry(env, "path", in.Path)
	if bad != nil {
		return *bad
	}
	dst, bad := resolve(env, "destination", in.Destination, true)
	if bad != nil {
		return *bad
	}
	if st, err := os.Stat(dst); err == nil && st.IsDir() && dst != src {
		dst = filepath.Join(dst, filepath.Base(src))
	}
	return doMove(ctx, env, "destination", src, dst, in.Overwrite, "Move")
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
