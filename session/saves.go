package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/tools/policy"
	"github.com/agentd-dev/agentd/workspace"
)

// Nothing is saved behind the user's back (PROTOCOL.md "Trust: who may set what"). Programs read
// the disk while agentd's edits sit unsaved in the editor, so before an exec tool runs the
// session's edited buffers are saved (saveBeforeRun): the permission request lists them
// (toolCall._meta["agentd/saves"]), a run nobody was asked about reports them in a notice, and a
// buffer that also holds the user's own unsaved changes is saved only when the setting is "all";
// otherwise it is left unsaved and the model is told so.

// editedFile is what the session knows of a file it edited since it was last saved.
type editedFile struct {
	// agentText is the text agentd's last edit left in the buffer.
	agentText string
	// userBefore: the buffer already held unsaved changes (not agentd's) when agentd first
	// edited it.
	userBefore bool
}

// plannedSave is one entry of "agentd/saves".
type plannedSave struct {
	Path        string `json:"path"`
	UserChanges bool   `json:"userChanges"`
}

// noteEdits remembers the files a call changed, for saveBeforeRun.
func (s *Session) noteEdits(diffs []tools.Diff) {
	if len(diffs) == 0 {
		return
	}
	if s.parent != nil {
		s.parent.noteEdits(diffs) // a subagent's edits are its parent's to save
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.edited == nil {
		s.edited = map[string]*editedFile{}
	}
	for _, d := range diffs {
		if d.Deleted || d.NewText == nil {
			delete(s.edited, d.Path)
			continue
		}
		f := s.edited[d.Path]
		if f == nil {
			f = &editedFile{}
			// The first edit since the file was saved: a buffer whose text (OldText, read
			// through the editor) differs from the disk held the user's unsaved changes. A file
			// the port wrote to disk itself holds NewText there.
			if d.OldText != nil {
				if disk, err := os.ReadFile(d.Path); err == nil && string(disk) != *d.OldText && string(disk) != *d.NewText {
					f.userBefore = true
				}
			}
			s.edited[d.Path] = f
		}
		f.agentText = *d.NewText
	}
}

// planSaves lists the session's edited files that are unsaved in the editor now, each marked
// when its buffer also holds changes agentd did not make.
func (t *turn) planSaves(ctx context.Context) []plannedSave {
	s := t.s.top()
	s.mu.Lock()
	files := map[string]editedFile{}
	for p, f := range s.edited {
		files[p] = *f
	}
	s.mu.Unlock()
	if len(files) == 0 || s.ws == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	if bufs, err := s.ws.DirtyBuffers(ctx); err == nil {
		dirty := map[string]bool{}
		for _, b := range bufs {
			dirty[b.Path] = true
		}
		paths = slices.DeleteFunc(paths, func(p string) bool { return !dirty[p] })
	}
	sort.Strings(paths)
	out := make([]plannedSave, 0, len(paths))
	for _, p := range paths {
		f := files[p]
		user := f.userBefore
		if doc, err := s.ws.ReadFile(ctx, p); err != nil || doc.Text != f.agentText {
			// Changed since agentd's edit (or unreadable, so not known to be agentd's alone).
			user = true
		}
		out = append(out, plannedSave{Path: p, UserChanges: user})
	}
	return out
}

// saveBeforeExec makes an exec call's permission request list what will be saved, and saves it
// once the call is allowed (Env.SaveBeforeExec), before the program starts.
func (t *turn) saveBeforeExec(c *call, env *tools.Env) {
	all := t.set.SaveBeforeRun == config.SaveAll
	var (
		plan  []plannedSave
		shown bool
	)
	permit := env.Permit
	env.Permit = func(ctx context.Context, req tools.PermissionRequest) error {
		plan = t.planSaves(ctx)
		var listed []plannedSave
		for _, p := range plan {
			if all || !p.UserChanges {
				listed = append(listed, p)
			}
		}
		if len(listed) > 0 {
			req.Meta = map[string]any{"agentd/saves": listed}
		}
		// Anything but a silent allow shows the request (or plan mode's switch prompt) and with
		// it the list.
		pc := policy.Call{Tool: c.name, Effect: tools.EffectExec, Paths: req.Paths, Command: req.Command, Env: req.Env, Stdin: req.Stdin}
		shown = policy.Decide(policy.Mode(t.s.currentMode()), t.s.allGrants(), pc) != policy.Allow
		return permit(ctx, req)
	}
	// A rejected program saves nothing: SaveBeforeExec runs only once the call is allowed.
	env.SaveBeforeExec = func(ctx context.Context) string {
		return t.save(ctx, c, plan, all, shown)
	}
}

// save saves what the permission listed. A file the user changed while the request was open
// is left unsaved too (unless "all"), and so is one not listed.
func (t *turn) save(ctx context.Context, c *call, plan []plannedSave, all, shown bool) string {
	s := t.s
	listed := map[string]bool{}
	for _, p := range plan {
		listed[p.Path] = all || !p.UserChanges
	}
	var save, kept []string
	for _, p := range t.planSaves(ctx) {
		if listed[p.Path] && (all || !p.UserChanges) {
			save = append(save, p.Path)
		} else {
			kept = append(kept, p.Path)
		}
	}
	var notes []string
	if len(kept) > 0 {
		notes = append(notes, s.m.text("saves.kept_unsaved", prompts.Run{"FILES": strings.Join(kept, ", ")}))
	}
	if len(save) == 0 {
		return strings.Join(notes, "\n")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := s.ws.SaveBuffers(ctx, save)
	if err != nil {
		if errors.Is(err, workspace.ErrUnsupported) {
			s.notice(protocol.SeverityWarning, "The editor cannot save buffers before a program runs", "The program reads the files on disk, which may lack agentd's unsaved edits.")
		}
		return strings.Join(append(notes, s.m.text("saves.save_failed", prompts.Run{"ERROR": err.Error(), "FILES": strings.Join(save, ", ")})), "\n")
	}
	top := s.top()
	top.mu.Lock()
	for _, p := range res.Saved {
		delete(top.edited, p)
	}
	top.mu.Unlock()
	if len(res.Saved) > 0 && !shown {
		s.notice(protocol.SeverityInfo, fmt.Sprintf("Saved %d file(s) before %s ran", len(res.Saved), c.name), strings.Join(res.Saved, "\n"))
	}
	if len(res.Failed) > 0 {
		var failed []string
		for p, why := range res.Failed {
			failed = append(failed, fmt.Sprintf("%s (%s)", p, why))
		}
		sort.Strings(failed)
		notes = append(notes, s.m.text("saves.not_saved", prompts.Run{"FILES": strings.Join(failed, ", ")}))
	}
	return strings.Join(notes, "\n")
}
