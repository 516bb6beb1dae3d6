package tools

import (
	"context"
	"fmt"
	"os"

	"github.com/agentd-dev/agentd/workspace"
)

type createDirIn struct {
	Path string `json:"path" schema:"maxLength=4096"`
}

func (in createDirIn) title() string {
	if in.Path == "" {
		return ""
	}
	return "Create directory " + in.Path
}

// CreateDir is the create_dir tool.
var CreateDir Tool = &typed[createDirIn]{spec: Spec{Name: "create_dir", Effect: EffectWrite, Kind: "edit", Title: "Create directory"}, run: createDir}

func createDir(ctx context.Context, env *Env, in createDirIn) Result {
	abs, bad := resolve(env, "path", in.Path, true)
	if bad != nil {
		return *bad
	}
	name := rel(env, abs)
	if st, err := os.Stat(abs); err == nil {
		if st.IsDir() {
			return Result{Output: fmt.Sprintf("%s/ already exists; nothing changed.", name), Locations: []Location{{Path: abs}}}
		}
		return Errorf("field path: %s exists and is a file", name)
	}
	if r := permit(ctx, env, PermissionRequest{Title: "Create directory " + name, Kind: "edit", Paths: []string{abs}}); r != nil {
		return *r
	}
	if r := applyEdit(ctx, env, "Create directory "+name, []workspace.Change{{Kind: workspace.ChangeCreate, Path: abs, Dir: true}}); r != nil {
		return *r
	}
	return Result{Output: fmt.Sprintf("Created %s/.", name), Locations: []Location{{Path: abs}}}
}
