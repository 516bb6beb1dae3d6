package tools

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
)

//go:embed move_path.md
var movePathDoc string

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

// MovePath is the move_path tool.
var MovePath = New(Spec{Name: "move_path", Description: movePathDoc, Effect: EffectWrite, Kind: "move", Title: "Move"}, movePath)

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
