package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

type renamePathIn struct {
	Path      string `json:"path" schema:"maxLength=4096"`
	NewName   string `json:"new_name" schema:"maxLength=255"`
	Overwrite bool   `json:"overwrite,omitempty"`
}

func (in renamePathIn) title() string {
	if in.Path == "" || in.NewName == "" {
		return ""
	}
	return fmt.Sprintf("Rename %s to %s", in.Path, in.NewName)
}

// RenamePath is the rename_path tool.
var RenamePath Tool = &typed[renamePathIn]{spec: Spec{Name: "rename_path", Effect: EffectWrite, Kind: "move", Title: "Rename"}, run: renamePath}

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
