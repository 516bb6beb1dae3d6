package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

// Restoring checkpoint N goes back to the state before turn N: every later turn's changes are
// undone too. The files every turn from N on touched are read once (the editor's text, unsaved
// included); then, in a model of those paths, each turn is undone from the newest back to N:
// a modified file's agent hunks are reversed (a 3-way merge of the turn's post-image, its
// pre-image and the text now, so the user's own changes since stay), a created one goes away, a
// deleted one comes back with its pre-image, a renamed one moves back. A file whose undo would
// lose the user's change (their edits overlap the agent's, they deleted what the agent made, a
// file stands where one must come back) is left whole as it is and listed with the reason. What
// the model ends with becomes one workspace/applyEdit: text replacements at the versions the
// editor has, then deletions, renames back and creations; the editor applies all or nothing.

// restoreState is what a session keeps for restores and for what the next turn tells the model.
type restoreState struct {
	mu sync.Mutex
	// events are the history rewrites and restores since the session began (read back from
	// the transcript at load): which checkpoints' conversation is gone, which were undone.
	events []rewind
	// notes are the restores the next turn tells the model about.
	notes []restoreNote
	// agent holds, for the files agentd's turns changed (the newest maxTracked), the text the
	// last change left; the next turn compares each with the file now (session/usertext.go).
	agent map[string]string
	seq   map[string]int
	n     int
}

// rewind is one history rewrite or restore, as the transcript records it.
type rewind struct {
	at   time.Time
	kind string // recCompact, recTruncate or recRestore
	// keep is how many history messages a truncation kept.
	keep int
	// checkpoint is the restored checkpoint (recRestore).
	checkpoint string
}

// restoreNote is one restore the next turn tells the model about.
type restoreNote struct {
	prompt string
	files  []protocol.RestoredFile
}

// RestoreCheckpoint answers agent/x/checkpoints/restore. It takes the session's turn slot, so
// a prompt sent meanwhile waits behind it, and refuses while a turn runs.
func (m *Manager) RestoreCheckpoint(ctx context.Context, p protocol.CheckpointRestoreParams) (protocol.CheckpointRestoreResult, error) {
	if err := checkRestore(&p); err != nil {
		return protocol.CheckpointRestoreResult{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return protocol.CheckpointRestoreResult{}, err
	}
	if err := s.takeTurnSlot(ctx); err != nil {
		return protocol.CheckpointRestoreResult{}, err
	}
	defer s.startNext()
	cp := s.checkpoint(p.CheckpointID)
	if cp == nil {
		return protocol.CheckpointRestoreResult{}, &ParamError{Field: "checkpointId", Message: fmt.Sprintf("no checkpoint %q in this session", p.CheckpointID)}
	}
	res := protocol.CheckpointRestoreResult{Files: []protocol.RestoredFile{}}
	if p.Restore != protocol.RestoreFiles {
		// Checked before the files change, so a refusal changes nothing.
		if err := s.canTruncate(cp); err != nil {
			return res, err
		}
	}
	if p.Restore != protocol.RestoreConversation {
		files, err := s.restoreFiles(ctx, cp)
		if err != nil {
			return res, err
		}
		res.Files = files
	}
	if p.Restore != protocol.RestoreFiles {
		if err := s.truncate(cp); err != nil {
			return res, err
		}
	}
	return res, nil
}

// takeTurnSlot makes the caller the session's one running turn, or says why not. A turn whose
// answer is on its way (ending) hands the slot over once it is sent, so a restore a client
// sends as soon as it reads a prompt's answer is not refused for the moment between the two.
func (s *Session) takeTurnSlot(ctx context.Context) error {
	s.mu.Lock()
	switch {
	case s.closed, s.running && (!s.ending || len(s.queue) > 0):
		s.mu.Unlock()
		return ErrBusy
	case !s.running:
		s.running = true
		s.mu.Unlock()
		return nil
	}
	tk := &ticket{ready: make(chan struct{})}
	s.queue = append(s.queue, tk)
	s.mu.Unlock()
	select {
	case <-tk.ready:
	case <-ctx.Done():
		s.mu.Lock()
		if i := slices.Index(s.queue, tk); i >= 0 {
			s.queue = slices.Delete(s.queue, i, i+1)
			s.mu.Unlock()
			return ctx.Err()
		}
		s.mu.Unlock()
		<-tk.ready // handed over meanwhile (or cancelled): take it and pass it on
		if !tk.cancelled {
			s.startNext()
		}
		return ctx.Err()
	}
	if tk.cancelled {
		return ErrBusy
	}
	return nil
}

// checkpoint returns the session's checkpoint id, or nil.
func (s *Session) checkpoint(id string) *checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cp := range s.checkpoints {
		if cp.ID == id {
			return cp
		}
	}
	return nil
}

// since returns cp and the checkpoints after it, oldest first.
func (s *Session) since(cp *checkpoint) []*checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.checkpoints {
		if c == cp {
			return append([]*checkpoint(nil), s.checkpoints[i:]...)
		}
	}
	return nil
}

// undone reports whether a restore since cp was made has already put its files back.
func (s *Session) undone(cp *checkpoint) bool {
	s.restore.mu.Lock()
	defer s.restore.mu.Unlock()
	for _, e := range s.restore.events {
		if e.kind != recRestore || !e.at.After(cp.CreatedAt) {
			continue
		}
		if r := s.checkpoint(e.checkpoint); r != nil && !r.CreatedAt.After(cp.CreatedAt) {
			return true
		}
		if e.checkpoint == cp.ID {
			return true
		}
	}
	return false
}

// canTruncate says why cp's turn can no longer be dropped from the history, or nil.
func (s *Session) canTruncate(cp *checkpoint) error {
	s.restore.mu.Lock()
	for _, e := range s.restore.events {
		if !e.at.After(cp.CreatedAt) {
			continue
		}
		switch {
		case e.kind == recCompact:
			s.restore.mu.Unlock()
			return &ParamError{Field: "restore", Message: "the conversation was compacted after this checkpoint, so its turn is summarized and cannot be dropped; restore \"files\" only"}
		case e.kind == recTruncate && cp.History >= e.keep:
			s.restore.mu.Unlock()
			return &ParamError{Field: "restore", Message: "this checkpoint's turn was already dropped from the conversation; restore \"files\" only"}
		}
	}
	s.restore.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if cp.History > len(s.history) {
		return &ParamError{Field: "restore", Message: "this checkpoint's turn is no longer in the conversation; restore \"files\" only"}
	}
	return nil
}

// truncate drops cp's turn and everything after it from the history, and records so in the
// transcript (one write, like every record), so a reload sees the shorter history.
func (s *Session) truncate(cp *checkpoint) error {
	if err := s.canTruncate(cp); err != nil {
		return err
	}
	now := time.Now().UTC()
	s.mu.Lock()
	s.history = s.history[:cp.History:cp.History]
	notes := s.contextNotes[:0:0]
	for _, n := range s.contextNotes {
		if n.at < cp.History {
			notes = append(notes, n)
		}
	}
	s.contextNotes = notes
	s.lastUsed = 0
	s.mu.Unlock()
	s.noteRewind(rewind{at: now, kind: recTruncate, keep: cp.History})
	s.record(record{T: recTruncate, At: now, Keep: cp.History, MessageID: cp.MessageID})
	return nil
}

// noteRewind remembers a history rewrite or a restore.
func (s *Session) noteRewind(e rewind) {
	s.restore.mu.Lock()
	s.restore.events = append(s.restore.events, e)
	s.restore.mu.Unlock()
}

// restoreFiles puts back the files as they were before cp's turn, with one workspace edit,
// records the restore, and leaves a note for the next turn.
func (s *Session) restoreFiles(ctx context.Context, cp *checkpoint) ([]protocol.RestoredFile, error) {
	if s.ws == nil {
		return nil, errors.New("this session has no workspace to restore files in")
	}
	cps := s.since(cp)
	if len(cps) == 0 {
		return nil, &ParamError{Field: "checkpointId", Message: "the checkpoint was dropped"}
	}
	pl := planRestore(ctx, s.ws, s.roots, cps)
	files := pl.report()
	if len(pl.changes) > 0 {
		if err := s.ws.ApplyEdit(ctx, "Restore checkpoint", pl.changes); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			reason := err.Error()
			var na *workspace.NotAppliedError
			if errors.As(err, &na) {
				reason = "the editor did not apply the restore"
				if na.Reason != "" {
					reason += ": " + na.Reason
				}
			}
			for i := range files {
				files[i].Restored, files[i].Reason = false, reason
			}
			return files, nil
		}
	}
	now := time.Now().UTC()
	s.noteRewind(rewind{at: now, kind: recRestore, checkpoint: cp.ID})
	s.record(record{T: recRestore, At: now, Checkpoint: cp.ID})
	if len(pl.changes) > 0 { // the model is told only when a file changed under it
		s.restore.mu.Lock()
		s.restore.notes = append(s.restore.notes, restoreNote{prompt: cp.Prompt, files: files})
		s.restore.mu.Unlock()
	}
	s.trackRestored(pl)
	return files, nil
}

// vfile is one path in the restore's model of the workspace.
type vfile struct {
	present bool
	text    string
	known   bool // text could be read
	lin     *lineage
}

// lineage is one file followed through the turns being undone: where it is now (cur, "" for a
// file the restore brings back), what the editor has there, and why it is left alone.
type lineage struct {
	cur     string
	doc     workspace.Doc
	path    string // the path reported when it ends nowhere
	reason  string
	touched bool
	// final is where the file ends, with its text; "" when it ends deleted.
	final string
	text  string
}

type restorePlan struct {
	lins    []*lineage
	changes []workspace.Change
}

// planRestore models undoing cps (oldest first) from the workspace as it is now and returns
// the edit that does it. A path outside roots (a session resumed with another cwd) is neither
// read nor written: the workspace port trusts that every path it is given was contained.
func planRestore(ctx context.Context, ws workspace.Workspace, roots *workspace.Roots, cps []*checkpoint) *restorePlan {
	pl := &restorePlan{}
	v := map[string]*vfile{}
	read := func(p string) *vfile {
		if f, ok := v[p]; ok {
			return f
		}
		f := &vfile{}
		doc, err := ws.ReadFile(ctx, p)
		switch {
		case err == nil:
			f.present, f.text, f.known = true, doc.Text, true
		case errors.Is(err, fs.ErrNotExist):
		default:
			f.present = true // there, but not readable as text
		}
		if f.present {
			f.lin = &lineage{cur: p, doc: doc, path: p}
			pl.lins = append(pl.lins, f.lin)
		}
		v[p] = f
		return f
	}
	conflict := func(l *lineage, reason string) {
		l.touched = true
		if l.reason == "" {
			l.reason = reason
		}
	}
	// revert takes the turn's hunks out of a file now at f: after → before.
	revert := func(f *vfile, c *fileChange) {
		l := f.lin
		l.touched = true
		if l.reason != "" {
			return
		}
		switch {
		case !f.known:
			conflict(l, "it could not be read as text")
		case !c.BeforeKnown:
			conflict(l, "its text before the turn was not recorded (a binary or unreadable file)")
		case c.AfterKnown && f.text == c.After:
			f.text = c.Before
		case f.text == c.Before:
			// Already as before the turn: the edit never landed (agentd stopped between the
			// checkpoint and the edit) or the user undid it.
		case c.AfterKnown:
			merged, ok := merge3(c.After, c.Before, f.text)
			if !ok {
				conflict(l, "changed since agentd's edit, and those changes overlap the lines agentd changed")
				return
			}
			f.text = merged
		default:
			conflict(l, "agentd stopped during that turn before recording the file's text after it, and the file differs from before the turn")
		}
	}
	for i := len(cps) - 1; i >= 0; i-- {
		for _, c := range undoOrder(cps[i].Files) {
			path, overwritten := strings.CutSuffix(c.Path, "\x00overwritten")
			if reason := outside(roots, path, c.From); reason != "" {
				l := &lineage{path: path}
				pl.lins = append(pl.lins, l)
				conflict(l, reason)
				continue
			}
			switch {
			case c.Dir:
				f := read(path)
				if f.lin == nil {
					f.lin = &lineage{path: path}
					pl.lins = append(pl.lins, f.lin)
				}
				conflict(f.lin, "a renamed directory is not restored; move it back to "+c.From)
			case c.Change == changeCreated:
				f := read(path)
				if !f.present {
					continue // already gone
				}
				f.lin.touched = true
				switch {
				case f.lin.reason != "":
				case c.AfterKnown && f.known && f.text == c.After:
					v[path] = &vfile{}
				default:
					conflict(f.lin, "changed since agentd created it; deleting it would lose those changes")
				}
			case c.Change == changeModified || c.Change == changeRenamed:
				f := read(path)
				if !f.present {
					l := &lineage{path: path}
					pl.lins = append(pl.lins, l)
					conflict(l, "deleted since agentd's edit")
					continue
				}
				revert(f, c)
				if c.Change == changeRenamed && c.From != path {
					to := read(c.From)
					if to.present {
						conflict(f.lin, "a file now stands at "+c.From+", where it would move back to")
						continue
					}
					v[c.From], v[path] = f, &vfile{}
				}
			case c.Change == changeDeleted || overwritten:
				f := read(path)
				switch {
				case !f.present:
					l := &lineage{path: path, touched: true}
					pl.lins = append(pl.lins, l)
					v[path] = &vfile{present: true, text: c.Before, known: c.BeforeKnown, lin: l}
					if !c.BeforeKnown {
						conflict(l, "its text before the turn was not recorded (a binary or unreadable file)")
					}
				case f.known && c.BeforeKnown && f.text == c.Before:
					f.lin.touched = true // already back (the delete never landed)
				default:
					l := &lineage{path: path}
					pl.lins = append(pl.lins, l)
					conflict(l, "a file now stands where it would come back")
				}
			}
		}
	}
	for p, f := range v {
		if f.present && f.lin != nil && f.lin.reason == "" {
			f.lin.final, f.lin.text = p, f.text
		}
	}
	pl.build()
	return pl
}

// outside says which of paths is outside roots now, or "".
func outside(roots *workspace.Roots, paths ...string) string {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if got, err := roots.Resolve(p, true); err != nil || got != p {
			return p + " is outside this session's workspace roots"
		}
	}
	return ""
}

// undoOrder sorts a turn's files for undoing: what it created and what it moved go first, so
// the paths they free are free when what it deleted or overwrote comes back.
func undoOrder(files []*fileChange) []*fileChange {
	rank := func(f *fileChange) int {
		switch {
		case strings.ContainsRune(f.Path, 0):
			return 4
		case f.Change == changeCreated:
			return 0
		case f.Change == changeRenamed:
			return 1
		case f.Change == changeModified:
			return 2
		}
		return 3
	}
	out := append([]*fileChange(nil), files...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// build turns the model's end state into changes: edits where the files are now, deletions,
// renames back and creations, in that order. A rename or creation whose path is taken then
// leaves its file alone, with the reason, and the plan is built again.
func (pl *restorePlan) build() {
	for range len(pl.lins) + 1 {
		pl.changes = nil
		var edits, deletes, renames, creates []workspace.Change
		exists := map[string]bool{}
		for _, l := range pl.lins {
			if l.cur != "" {
				exists[l.cur] = true
			}
		}
		for _, l := range pl.lins {
			if l.reason != "" || !l.touched {
				continue
			}
			switch {
			case l.cur != "" && l.final == "":
				deletes = append(deletes, workspace.Change{Kind: workspace.ChangeDelete, Path: l.cur})
			case l.cur != "":
				if l.text != l.doc.Text {
					edits = append(edits, workspace.Change{Kind: workspace.ChangeEdit, Path: l.cur, Version: l.doc.Version, OldText: l.doc.Text, NewText: l.text})
				}
				if l.final != l.cur {
					renames = append(renames, workspace.Change{Kind: workspace.ChangeRename, Path: l.cur, NewPath: l.final})
				}
			case l.final != "":
				creates = append(creates, workspace.Change{Kind: workspace.ChangeCreate, Path: l.final, NewText: l.text})
			}
		}
		for _, c := range deletes {
			delete(exists, c.Path)
		}
		blocked := false
		for _, c := range append(renames, creates...) {
			to := c.NewPath
			if c.Kind == workspace.ChangeCreate {
				to = c.Path
			}
			if exists[to] {
				for _, l := range pl.lins {
					if l.final == to && l.reason == "" {
						l.reason = "another file stands at " + to
					}
				}
				blocked = true
				break
			}
			delete(exists, c.Path)
			exists[to] = true
		}
		if !blocked {
			pl.changes = append(append(append(edits, deletes...), renames...), creates...)
			return
		}
	}
}

// report lists each file the restore looked at: where it ends (or where it was deleted from),
// whether it is as it was before the checkpoint's turn, and why not.
func (pl *restorePlan) report() []protocol.RestoredFile {
	out := []protocol.RestoredFile{}
	seen := map[string]bool{}
	for _, l := range pl.lins {
		if !l.touched {
			continue
		}
		p := l.final
		if p == "" {
			p = l.cur
		}
		if p == "" {
			p = l.path
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, protocol.RestoredFile{Path: p, Restored: l.reason == "", Reason: l.reason})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// merge3 applies the change base → ours to theirs, a text that also changed base: both sides'
// line hunks must be apart (not even touching, as git merges), and a hunk both made alike
// counts once. ok is false when they overlap or the diff is too large.
func merge3(base, ours, theirs string) (string, bool) {
	switch {
	case theirs == base:
		return ours, true
	case ours == base, ours == theirs:
		return theirs, true
	}
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	ho, ok1 := workspace.LineDiff(b, o)
	ht, ok2 := workspace.LineDiff(b, t)
	if !ok1 || !ok2 {
		return "", false
	}
	type side struct {
		h     workspace.Hunk
		lines []string
	}
	var all []side
	i, j := 0, 0
	for i < len(ho) || j < len(ht) {
		switch {
		case j == len(ht) || (i < len(ho) && ho[i].OldTo < ht[j].OldFrom):
			all = append(all, side{ho[i], o[ho[i].NewFrom:ho[i].NewTo]})
			i++
		case i == len(ho) || ht[j].OldTo < ho[i].OldFrom:
			all = append(all, side{ht[j], t[ht[j].NewFrom:ht[j].NewTo]})
			j++
		case ho[i].OldFrom == ht[j].OldFrom && ho[i].OldTo == ht[j].OldTo &&
			strings.Join(o[ho[i].NewFrom:ho[i].NewTo], "") == strings.Join(t[ht[j].NewFrom:ht[j].NewTo], ""):
			all = append(all, side{ho[i], o[ho[i].NewFrom:ho[i].NewTo]})
			i, j = i+1, j+1
		default:
			return "", false
		}
	}
	var sb strings.Builder
	sb.Grow(len(theirs) + len(ours) - len(base) + 64)
	at := 0
	for _, sd := range all {
		for _, l := range b[at:sd.h.OldFrom] {
			sb.WriteString(l)
		}
		for _, l := range sd.lines {
			sb.WriteString(l)
		}
		at = sd.h.OldTo
	}
	for _, l := range b[at:] {
		sb.WriteString(l)
	}
	return sb.String(), true
}

// undoCommand is /undo: restore the files of the newest checkpoint not restored yet, and
// answer with what was restored as an agent message. The model is not called; it is told in
// the next turn. The exchange is kept in the transcript's replay, not in the model's history.
func (t *turn) undoCommand(blocks []protocol.ContentBlock, announce bool) protocol.PromptResult {
	s := t.s
	userMsgID := s.nextMessageID()
	for _, b := range blocks {
		b := b
		u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateUserMessageChunk, MessageID: userMsgID, Content: &b}
		if announce {
			s.update(u)
		}
		s.record(record{T: recUpdate, Update: &u})
	}
	var cp *checkpoint
	s.mu.Lock()
	cps := append([]*checkpoint(nil), s.checkpoints...)
	s.mu.Unlock()
	for i := len(cps) - 1; i >= 0; i-- {
		if !s.undone(cps[i]) {
			cp = cps[i]
			break
		}
	}
	var text string
	switch {
	case cp == nil:
		text = "Nothing to undo: no turn of this session changed files since the last restore."
	default:
		files, err := s.restoreFiles(t.ctx, cp)
		if err != nil {
			if t.ctx.Err() != nil {
				return t.cancelled()
			}
			text = "Nothing was restored: " + err.Error()
			break
		}
		text = undoSummary(cp, files)
	}
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: s.nextMessageID(), Content: &protocol.ContentBlock{Type: "text", Text: text}}
	s.update(u)
	s.record(record{T: recUpdate, Update: &u})
	return protocol.PromptResult{StopReason: protocol.StopEndTurn}
}

// undoSummary is /undo's answer: which files went back, and why others did not.
func undoSummary(cp *checkpoint, files []protocol.RestoredFile) string {
	var ok, not []string
	for _, f := range files {
		if f.Restored {
			ok = append(ok, "- "+f.Path)
		} else {
			not = append(not, "- "+f.Path+": "+f.Reason)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Undid the file changes of %q.", cp.Prompt)
	if len(ok) > 0 {
		b.WriteString("\n\nRestored:\n" + strings.Join(ok, "\n"))
	}
	if len(not) > 0 {
		b.WriteString("\n\nNot restored:\n" + strings.Join(not, "\n"))
	}
	return b.String()
}
