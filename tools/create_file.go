package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentd-dev/agentd/workspace"
)

type createFileIn struct {
	Path      string `json:"path" schema:"maxLength=4096"`
	Content   string `json:"content" schema:"maxLength=8388608"`
	Overwrite bool   `json:"overwrite,omitempty"`
}

func (in createFileIn) title() string {
	if in.Path == "" {
		return ""
	}
	return "Create " + in.Path
}

// CreateFile is the create_file tool.
var CreateFile Tool = &typed[createFileIn]{spec: Spec{Name: "create_file", Effect: EffectWrite, Kind: "edit", Title: "Create file"}, run: createFile}

func createFile(ctx context.Context, env *Env, in createFileIn) Result {
	abs, bad := resolve(env, "path", in.Path, true)
	if bad != nil {
		return *bad
	}
	name := rel(env, abs)
	var change workspace.Change
	var diff Diff
	doc, err := env.WS.ReadFile(ctx, abs)
	switch {
	case err == nil:
		if !in.Overwrite {
			return Errorf("field path: %s already exists (%s); change it with edit_file, or set overwrite:true to replace all of it", name, plural(len(splitLines(doc.Text)), "line"))
		}
		if doc.Text == in.Content {
			return Result{Output: fmt.Sprintf("%s already has exactly this content; nothing changed.", name), Locations: []Location{{Path: abs, Line: 1}}}
		}
		change = workspace.Change{Kind: workspace.ChangeEdit, Path: abs, Version: doc.Version, OldText: doc.Text, NewText: in.Content}
		diff = Diff{Path: abs, OldText: ptr(doc.Text), NewText: ptr(in.Content)}
	case errors.Is(err, fs.ErrNotExist):
		change = workspace.Change{Kind: workspace.ChangeCreate, Path: abs, NewText: in.Content}
		diff = Diff{Path: abs, NewText: ptr(in.Content)}
	case isDirErr(err):
		return Errorf("field path: %s is a directory", name)
	default:
		return Errorf("field path: cannot check %s: %v", name, err)
	}
	verb := "Create"
	if change.Kind == workspace.ChangeEdit {
		verb = "Overwrite"
	}
	if r := permit(ctx, env, PermissionRequest{Title: verb + " " + name, Kind: "edit", Paths: []string{abs}, Diffs: []Diff{diff}}); r != nil {
		return *r
	}
	if r := applyEdit(ctx, env, verb+" "+name, []workspace.Change{change}); r != nil {
		return *r
	}
	lines := len(splitLines(in.Content))
	msg := fmt.Sprintf("Created %s (%s).", name, plural(lines, "line"))
	if change.Kind == workspace.ChangeEdit {
		msg = fmt.Sprintf("Replaced the content of %s (%s now).", name, plural(lines, "line"))
	}
	if strings.Contains(in.Content, "\r\n") {
		msg += " The content uses CRLF line endings."
	}
	return afterEdit(ctx, env, abs, Result{Output: msg, Diffs: []Diff{diff}, Locations: []Location{{Path: abs, Line: 1}}})
}
