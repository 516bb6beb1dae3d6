package tools

import (
	"context"
	"io/fs"
)

// WalkProject visits the regular files under root, in sorted order, that the walks of the tools
// also see: .gitignore, .git/info/exclude and .ignore honoured, the .git directory and symlinks
// left out. The semantic index (tools/semindex) reads the project through it.
func WalkProject(ctx context.Context, root string, visit func(abs string, d fs.DirEntry) error) error {
	_, err := walk(ctx, root, root, walkOpts{}, func(e walkEntry) error {
		if !e.Entry.Type().IsRegular() {
			return nil
		}
		return visit(e.Abs, e.Entry)
	})
	return err
}
