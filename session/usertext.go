package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/workspace"
)

// The model is told, at the start of the next turn, what happened to the files it edited
// while it was not looking: files the user restored to a checkpoint (review.restored), and files
// the user changed since agentd's last edit to them (review.user_changed, with a short diff), so
// it does not fight the user's edits. Both are text parts of the turn's user message, so they
// stay where they were said in every later request. Only the files agentd's turns changed are
// checked: each one's text after agentd's last change is kept (the newest maxTracked files), and
// each is read once per turn (the editor's buffer, else the disk), in parallel and bounded by
// userReadTimeout; a slow editor only leaves the check out.
const (
	maxTracked      = 20
	maxDiffLines    = 40
	maxDiffBytes    = 4 << 10
	userReadTimeout = time.Second
)

// trackEdits remembers the text the turn's changes left in each file.
func (s *Session) trackEdits(files []*fileChange) {
	r := &s.restore
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range files {
		if f.Dir || strings.ContainsRune(f.Path, 0) {
			continue
		}
		if f.Change == changeRenamed {
			r.untrack(f.From)
		}
		if f.Change == changeDeleted || !f.AfterKnown {
			r.untrack(f.Path)
			continue
		}
		r.track(f.Path, f.After)
	}
}

// trackRestored follows a restore: a file it put back holds the text agentd left there now.
func (s *Session) trackRestored(pl *restorePlan) {
	r := &s.restore
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range pl.lins {
		if !l.touched || l.reason != "" {
			continue
		}
		if l.cur != "" {
			r.untrack(l.cur)
		}
		if l.final != "" {
			r.track(l.final, l.text)
		}
	}
}

// track and untrack are called with r.mu held.
func (r *restoreState) track(path, text string) {
	if r.agent == nil {
		r.agent, r.seq = map[string]string{}, map[string]int{}
	}
	r.n++
	r.agent[path], r.seq[path] = text, r.n
	for len(r.agent) > maxTracked {
		oldest, min := "", 0
		for p, n := range r.seq {
			if oldest == "" || n < min {
				oldest, min = p, n
			}
		}
		r.untrack(oldest)
	}
}

func (r *restoreState) untrack(path string) {
	delete(r.agent, path)
	delete(r.seq, path)
}

// reviewNotes are the texts the turn's user message carries about restored files and the
// user's own changes; nil when there is nothing to tell.
func (t *turn) reviewNotes() []providers.Part {
	s := t.s
	set := t.texts()
	var parts []providers.Part
	s.restore.mu.Lock()
	notes := s.restore.notes
	s.restore.notes = nil
	tracked := make(map[string]string, len(s.restore.agent))
	for p, text := range s.restore.agent {
		tracked[p] = text
	}
	s.restore.mu.Unlock()
	for _, n := range notes {
		var files []map[string]any
		for _, f := range n.files {
			files = append(files, map[string]any{"PATH": f.Path, "REASON": f.Reason})
		}
		if len(files) > 0 {
			parts = append(parts, providers.Part{Type: providers.PartText, Text: set.Render("review.restored", prompts.Run{"RESTORE_PROMPT": n.prompt, "RESTORED_FILES": files})})
		}
	}
	if changed := t.userChanges(tracked); len(changed) > 0 {
		parts = append(parts, providers.Part{Type: providers.PartText, Text: set.Render("review.user_changed", prompts.Run{"USER_CHANGED_FILES": changed})})
	}
	return parts
}

// userChanges reads the tracked files and returns those the user changed, each with a short
// diff from agentd's text to the text now, and remembers the text now so a change is told once.
func (t *turn) userChanges(tracked map[string]string) []map[string]any {
	s := t.s
	if len(tracked) == 0 || s.ws == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(t.ctx, userReadTimeout)
	defer cancel()
	type result struct {
		text    string
		deleted bool
		ok      bool
	}
	var mu sync.Mutex
	now := map[string]result{}
	var wg sync.WaitGroup
	for p := range tracked {
		if outside(s.roots, p) != "" {
			continue // a session resumed with another cwd: never shown to the model
		}
		if t.changes != nil && t.changes.tracked(p) {
			continue // changed by this turn (a steering message comes mid-turn): not the user's
		}
		wg.Go(func() {
			doc, err := s.ws.ReadFile(ctx, p)
			r := result{text: doc.Text, ok: err == nil}
			if err != nil && errors.Is(err, fs.ErrNotExist) && ctx.Err() == nil {
				r.deleted, r.ok = true, true
			}
			mu.Lock()
			now[p] = r
			mu.Unlock()
		})
	}
	wg.Wait()
	var paths []string
	for p, r := range now {
		if r.ok && (r.deleted || r.text != tracked[p]) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	sort.Strings(paths)
	var out []map[string]any
	s.restore.mu.Lock()
	defer s.restore.mu.Unlock()
	for _, p := range paths {
		r := now[p]
		if s.restore.agent[p] != tracked[p] {
			continue // tracked anew meanwhile
		}
		if r.deleted {
			s.restore.untrack(p)
			out = append(out, map[string]any{"PATH": p, "DELETED": true, "DIFF": ""})
			continue
		}
		s.restore.agent[p] = r.text
		out = append(out, map[string]any{"PATH": p, "DELETED": false, "DIFF": shortDiff(tracked[p], r.text)})
	}
	return out
}

// shortDiff shows the lines that differ between a and b as unified-diff hunks without context
// lines, cut at maxDiffLines lines and maxDiffBytes bytes.
func shortDiff(a, b string) string {
	al, bl := splitLines(a), splitLines(b)
	hunks, ok := workspace.LineDiff(al, bl)
	if !ok {
		return fmt.Sprintf("(too many lines changed to show: %d lines before, %d now)", len(al), len(bl))
	}
	var sb strings.Builder
	lines, total := 0, 0
	for _, h := range hunks {
		total += h.OldTo - h.OldFrom + h.NewTo - h.NewFrom
	}
	shown := 0
	line := func(prefix, l string) bool {
		if lines >= maxDiffLines || sb.Len()+len(l) > maxDiffBytes {
			return false
		}
		sb.WriteString(prefix)
		sb.WriteString(strings.TrimSuffix(l, "\n"))
		sb.WriteByte('\n')
		lines++
		return true
	}
hunks:
	for _, h := range hunks {
		if lines >= maxDiffLines {
			break
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", span(h.OldFrom, h.OldTo), span(h.NewFrom, h.NewTo))
		for _, l := range al[h.OldFrom:h.OldTo] {
			if !line("-", l) {
				break hunks
			}
			shown++
		}
		for _, l := range bl[h.NewFrom:h.NewTo] {
			if !line("+", l) {
				break hunks
			}
			shown++
		}
	}
	if shown < total {
		fmt.Fprintf(&sb, "(%d more changed lines not shown; read the file)\n", total-shown)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// span is a hunk's line range as unified diff writes it: start,count (1-based), start alone
// for one line.
func span(from, to int) string {
	switch n := to - from; n {
	case 0:
		return fmt.Sprintf("%d,0", from)
	case 1:
		return fmt.Sprintf("%d", from+1)
	default:
		return fmt.Sprintf("%d,%d", from+1, n)
	}
}
