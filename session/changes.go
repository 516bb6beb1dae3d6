package session

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

// A turn's changes are seen where every tool's write passes: the workspace port's ApplyEdit.
// The turn hands its tools a recordingWS, which reads what a change is about to replace (the
// editor's text, unsaved included) before the edit and, once the editor applied it, folds it
// into the turn's list: one entry per file, keyed by where the file is now, holding its state
// before the turn (its pre-image) and its text after. The prompt's answer lists them
// (_meta["agentd/changes"]); they are also the turn's checkpoint.

// Change kinds of a turn's file (protocol.FileChange.Change).
const (
	changeCreated  = "created"
	changeModified = "modified"
	changeDeleted  = "deleted"
	changeRenamed  = "renamed"
)

// maxDeletedFiles bounds the files of one deleted directory whose pre-images are kept.
const maxDeletedFiles = 1000

// fileChange is one file the turn changed.
type fileChange struct {
	Path   string `json:"path"`
	Change string `json:"change"`
	// From is where a renamed file was before the turn.
	From string `json:"from,omitempty"`
	// Before is the file's text before the turn (at From for a renamed file); BeforeKnown says
	// it could be read (a binary or an unreadable file has none). A created file has none.
	Before      string `json:"before,omitempty"`
	BeforeKnown bool   `json:"beforeKnown,omitempty"`
	// After is the file's text after the turn's last change to it (none once deleted).
	After      string `json:"after,omitempty"`
	AfterKnown bool   `json:"afterKnown,omitempty"`
	// Dir marks a renamed directory (its files are not listed one by one).
	Dir bool `json:"dir,omitempty"`
	// origin is the path Before was read at (the checkpoint keeps it under that name).
	origin string
}

// turnChanges collects the files a turn changed.
type turnChanges struct {
	mu    sync.Mutex
	files map[string]*fileChange
	seq   map[string]int // path → order of first change, so the list follows the turn
	n     int
	// before, when set, runs with the pre-images of an edit about to be applied (the turn's
	// checkpoint saves them).
	before func(changes []workspace.Change, pre map[string]preImage)
}

func newTurnChanges() *turnChanges {
	return &turnChanges{files: map[string]*fileChange{}, seq: map[string]int{}}
}

// recordingWS is the workspace a turn's tools see: the session's, with ApplyEdit recorded.
type recordingWS struct {
	workspace.Workspace
	tc *turnChanges
}

func (w recordingWS) ApplyEdit(ctx context.Context, label string, changes []workspace.Change) error {
	pre := w.tc.preImages(ctx, w.Workspace, changes)
	if w.tc.before != nil {
		w.tc.before(changes, pre)
	}
	if err := w.Workspace.ApplyEdit(ctx, label, changes); err != nil {
		return err
	}
	w.tc.applied(changes, pre)
	return nil
}

// preImage is a file's text read before a change replaced it; ok is false when it could not be
// read as text.
type preImage struct {
	text string
	ok   bool
}

// preImages reads what the changes are about to replace and the turn has not recorded yet.
func (tc *turnChanges) preImages(ctx context.Context, ws workspace.Workspace, changes []workspace.Change) map[string]preImage {
	pre := map[string]preImage{}
	read := func(p string) {
		if _, seen := pre[p]; seen || tc.tracked(p) {
			return
		}
		doc, err := ws.ReadFile(ctx, p)
		pre[p] = preImage{text: doc.Text, ok: err == nil}
	}
	for _, c := range changes {
		switch c.Kind {
		case workspace.ChangeDelete:
			st, err := os.Lstat(c.Path)
			if err == nil && st.IsDir() {
				for _, f := range filesUnder(c.Path) {
					read(f)
				}
				continue
			}
			read(c.Path)
		case workspace.ChangeCreate:
			if !c.Dir {
				if _, err := os.Lstat(c.Path); err == nil {
					read(c.Path)
				}
			}
		case workspace.ChangeRename:
			if st, err := os.Lstat(c.Path); err == nil && !st.IsDir() {
				read(c.Path)
			}
			if _, err := os.Lstat(c.NewPath); err == nil && c.Overwrite {
				read(c.NewPath)
			}
		}
	}
	return pre
}

// filesUnder lists the regular files under dir, at most maxDeletedFiles.
func filesUnder(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if len(out) >= maxDeletedFiles {
			return filepath.SkipAll
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func (tc *turnChanges) tracked(p string) bool {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	_, ok := tc.files[p]
	return ok
}

func (tc *turnChanges) put(f *fileChange) {
	tc.files[f.Path] = f
	if _, ok := tc.seq[f.Path]; !ok {
		tc.n++
		tc.seq[f.Path] = tc.n
	}
}

// applied folds changes the editor applied into the list.
func (tc *turnChanges) applied(changes []workspace.Change, pre map[string]preImage) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, c := range changes {
		switch c.Kind {
		case workspace.ChangeEdit:
			f := tc.files[c.Path]
			if f == nil {
				f = &fileChange{Path: c.Path, Change: changeModified, Before: c.OldText, BeforeKnown: true, origin: c.Path}
				tc.put(f)
			}
			f.After, f.AfterKnown = c.NewText, true
		case workspace.ChangeCreate:
			if c.Dir {
				continue
			}
			f := tc.files[c.Path]
			switch {
			case f == nil:
				f = &fileChange{Path: c.Path, Change: changeCreated}
				if p, ok := pre[c.Path]; ok {
					f.Change, f.Before, f.BeforeKnown, f.origin = changeModified, p.text, p.ok, c.Path
				}
				tc.put(f)
			case f.Change == changeDeleted:
				f.Change = changeModified
			}
			f.After, f.AfterKnown = c.NewText, true
		case workspace.ChangeDelete:
			paths := []string{c.Path}
			for p := range pre {
				if strings.HasPrefix(p, c.Path+string(filepath.Separator)) {
					paths = append(paths, p)
				}
			}
			for p := range tc.files {
				if strings.HasPrefix(p, c.Path+string(filepath.Separator)) {
					paths = append(paths, p)
				}
			}
			for _, p := range paths {
				tc.deleted(p, pre)
			}
		case workspace.ChangeRename:
			tc.renamed(c.Path, c.NewPath, pre)
			prefix := c.Path + string(filepath.Separator)
			for p := range tc.files {
				if strings.HasPrefix(p, prefix) {
					tc.renamed(p, filepath.Join(c.NewPath, p[len(prefix):]), pre)
				}
			}
		}
	}
}

func (tc *turnChanges) deleted(p string, pre map[string]preImage) {
	f := tc.files[p]
	switch {
	case f == nil:
		img, ok := pre[p]
		if !ok {
			return // not a file the turn knew of (a directory itself)
		}
		tc.put(&fileChange{Path: p, Change: changeDeleted, Before: img.text, BeforeKnown: img.ok, origin: p})
	case f.Change == changeCreated:
		delete(tc.files, p)
	case f.Change == changeRenamed:
		// Gone from where it was moved to: deleted where it was before the turn.
		delete(tc.files, p)
		tc.put(&fileChange{Path: f.From, Change: changeDeleted, Before: f.Before, BeforeKnown: f.BeforeKnown, origin: f.origin})
	default:
		f.Change, f.After, f.AfterKnown = changeDeleted, "", false
	}
}

func (tc *turnChanges) renamed(src, dst string, pre map[string]preImage) {
	f := tc.files[src]
	if f == nil {
		st, err := os.Lstat(dst)
		img, ok := pre[src]
		if !ok && (err != nil || !st.IsDir()) {
			return
		}
		f = &fileChange{Path: src, Change: changeRenamed, From: src, Before: img.text, BeforeKnown: img.ok, After: img.text, AfterKnown: img.ok, Dir: err == nil && st.IsDir(), origin: src}
	}
	delete(tc.files, src)
	switch f.Change {
	case changeCreated:
	case changeRenamed:
		if f.From == dst {
			f.Change, f.From = changeModified, ""
		}
	default:
		f.Change, f.From = changeRenamed, src
	}
	f.Path = dst
	tc.put(f)
	if img, ok := pre[dst]; ok && dst != src {
		// An overwritten destination: its text before the turn is a pre-image too, kept under
		// a key no file has.
		tc.put(&fileChange{Path: dst + "\x00overwritten", Change: changeDeleted, Before: img.text, BeforeKnown: img.ok, origin: dst})
	}
}

// list returns the changed files in the order the turn first changed them.
func (tc *turnChanges) list() []*fileChange {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	out := make([]*fileChange, 0, len(tc.files))
	for _, f := range tc.files {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return tc.seq[out[i].Path] < tc.seq[out[j].Path] })
	return out
}

// wire is the list as the prompt's answer carries it: path, change, from and line counts.
func wireChanges(files []*fileChange) []protocol.FileChange {
	var out []protocol.FileChange
	for _, f := range files {
		if f.Dir || strings.ContainsRune(f.Path, 0) {
			continue
		}
		fc := protocol.FileChange{Path: f.Path, Change: f.Change, From: f.From}
		fc.Added, fc.Removed = lineCounts(f)
		out = append(out, fc)
	}
	return out
}

// lineCounts counts the lines the turn added and removed in one file.
func lineCounts(f *fileChange) (added, removed int) {
	var before, after []string
	if f.BeforeKnown && f.Change != changeCreated {
		before = splitLines(f.Before)
	}
	if f.AfterKnown && f.Change != changeDeleted {
		after = splitLines(f.After)
	}
	hunks, ok := workspace.LineDiff(before, after)
	if !ok {
		return len(after), len(before)
	}
	for _, h := range hunks {
		added += h.NewTo - h.NewFrom
		removed += h.OldTo - h.OldFrom
	}
	return added, removed
}

// splitLines splits text into lines, each keeping its newline; "" has none.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
