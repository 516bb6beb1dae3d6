package tools

import (
	"context"
	"fmt"
	"os"

	"github.com/agentd-dev/agentd/workspace"
)

type deletePathIn struct {
	Path      string `json:"path" schema:"maxLength=4096"`
	Recursive bool   `json:"recursive,omitempty"`
}

func (in deletePathIn) title() string {
	if in.Path == "" {
		return ""
	}
	return "Delete " + in.Path
}

// DeletePath is the delete_path tool.
var DeletePath Tool = &typed[deletePathIn]{spec: Spec{Name: "delete_path", Effect: EffectWrite, Kind: "delete", Title: "Delete"}, run: deletePath}

func deletePath(ctx context.Context, env *Env, in deletePathIn) Result {
	abs, bad := resolveEntry(env, "path", in.Path)
	if bad != nil {
		return *bad
	}
	name := rel(env, abs)
	st, err := os.Lstat(abs)
	if err != nil {
		return Errorf("field path: %s does not exist", name)
	}
	var diffs []Diff
	if st.IsDir() {
		if ents, _ := os.ReadDir(abs); len(ents) > 0 && !in.Recursive {
			return Errorf("field recursive: %s is a directory holding %s; set recursive:true to delete it with everything in it", name, plural(countTree(abs), "file"))
		}
	} else if st.Mode().IsRegular() && st.Size() <= MaxFileBytes {
		if doc, err := env.WS.ReadFile(ctx, abs); err == nil && !isBinary(doc.Text) {
			diffs = append(diffs, Diff{Path: abs, OldText: ptr(doc.Text), NewText: ptr(""), Deleted: true})
		}
	}
	what := describeEntry(abs)
	title := fmt.Sprintf("Delete %s %s", what, name)
	if r := permit(ctx, env, PermissionRequest{Title: title, Kind: "delete", Paths: []string{abs}, Diffs: diffs}); r != nil {
		return *r
	}
	change := workspace.Change{Kind: workspace.ChangeDelete, Path: abs, Recursive: st.IsDir()}
	if r := applyEdit(ctx, env, title, []workspace.Change{change}); r != nil {
		return *r
	}
	return Result{Output: fmt.Sprintf("Deleted %s %s.", what, name), Diffs: diffs}
}
