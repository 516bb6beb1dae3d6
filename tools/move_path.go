package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

type movePathIn struct {
	Path        string `json:"path" schema:"maxLength=4096"`
	Destination string `json:"destination" schema:"maxLength=4096"`
	Overwrite   bool   `json:"overwrite,omitempty"`
}

func (in movePathIn) title() string {
	if in.Path == "" || in.Destination == "" {
		return ""
	}
	return fmt.Sprintf("Move %s to %s", in.Path, in.Destination)
}

// MovePath is the move_path tool.
var MovePath Tool = &typed[movePathIn]{spec: Spec{Name: "move_path", Effect: EffectWrite, Kind: "move", Title: "Move"}, run: movePath}

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
