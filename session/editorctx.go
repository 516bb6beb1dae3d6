package session

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/workspace"
)

// What the user is looking at and what the project is built with: the editor's answer to
// agent/x/editor_state and the modules found in the roots, turned into the run values of the
// per-turn context (CURRENT_FILE, SELECTION, OTHER_FILES, OUTSIDE_FILES, MODULES). Both are data
// from outside agentd (the client, the repository), checked and capped here before the model
// reads them; the system prompt never holds them, so it stays byte-stable.

// editorStater is a workspace that can say what the user is looking at: the editor bridge's,
// when the client advertised editorState. The ACP door's has no such request.
type editorStater interface {
	EditorState(ctx context.Context) (workspace.EditorState, error)
}

const (
	// maxOpenFilesShown bounds the open files listed; the rest are counted.
	maxOpenFilesShown = 20
	// maxSelectionBytes bounds the selected text shown.
	maxSelectionBytes = 8 << 10
	// maxEditorPath is the longest path from the editor that is shown.
	maxEditorPath = 1024
	// maxModulesShown bounds the modules listed; the rest are counted.
	maxModulesShown = 30
	// modulesTTL is how long a session trusts its list of modules before it looks again in the
	// background (a turn that writes a manifest makes it look at once).
	modulesTTL = time.Minute
)

// editorState asks the editor, once per turn, what the user is looking at. A client without
// the request, a failing or a slow one (the live context's timeout) costs only this part of the
// context, with a log line.
//
// A client that lets the request time out twice in a row is not asked again in this session:
// each time costs the turn the live context's whole timeout before its first model call.
func (t *turn) editorState(ctx context.Context) (workspace.EditorState, bool) {
	es, ok := t.s.ws.(editorStater)
	if !ok || t.s.editorTimeouts.Load() >= maxEditorTimeouts {
		return workspace.EditorState{}, false
	}
	st, err := es.EditorState(ctx)
	if errors.Is(err, workspace.ErrUnsupported) {
		return workspace.EditorState{}, false
	}
	if err != nil && ctx.Err() != nil {
		if t.s.editorTimeouts.Add(1) == maxEditorTimeouts {
			t.s.m.log.Warn("the editor did not answer agent/x/editor_state in time twice in a row; not asked again in this session", zap.String("session", t.s.id))
		}
		return workspace.EditorState{}, false
	}
	t.s.editorTimeouts.Store(0)
	if err != nil {
		t.s.m.log.Warn("the editor's state is left out of the context", zap.String("session", t.s.id), zap.Error(err))
		// A malformed field costs only itself: what could be read is kept.
		return st, true
	}
	return st, true
}

// maxEditorTimeouts is how many editor_state requests in a row may time out before a session
// stops asking.
const maxEditorTimeouts = 2

// shownPath checks a path the editor sent before the model reads it: absolute, one line of
// printable characters, not too long. It returns the cleaned path.
func shownPath(p string) (string, bool) {
	if p == "" || len(p) > maxEditorPath || !filepath.IsAbs(p) || !printable(p) {
		return "", false
	}
	return filepath.Clean(p), true
}

// printable reports whether s is valid UTF-8 without control or format characters (line
// breaks, escapes, bidirectional overrides), so it cannot start a line of its own or hide text.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// outsideRoots reports whether p is outside the session's roots (symlinks followed): the model
// cannot read or edit it with its tools, and is told so.
func outsideRoots(roots *workspace.Roots, p string) bool {
	if roots == nil {
		return true
	}
	_, err := roots.Resolve(p, false)
	return err != nil
}

// closingSelection matches what could end the envelope a selection is shown in.
var closingSelection = regexp.MustCompile(`(?i)</\s*selection\b`)

// editorRun puts the editor's state into run: CURRENT_FILE (and CURRENT_FILE_OUTSIDE),
// SELECTION {PATH, START_LINE, END_LINE, TEXT, CUT, OUTSIDE}, OTHER_FILES and OUTSIDE_FILES (the
// open files inside and outside the roots, the active one left out, at most 20 in all) and
// MORE_OPEN_FILES. It returns how many entries it dropped as malformed.
func editorRun(st workspace.EditorState, roots *workspace.Roots, run prompts.Run) (dropped int) {
	active, ok := shownPath(st.ActiveFile)
	if st.ActiveFile != "" && !ok {
		dropped++
	}
	if ok {
		run["CURRENT_FILE"] = active
		run["CURRENT_FILE_OUTSIDE"] = outsideRoots(roots, active)
	}
	if sel := st.Selection; sel != nil {
		path := sel.Path
		if path == "" {
			path = st.ActiveFile
		}
		p, ok := shownPath(path)
		if ok && sel.StartLine >= 1 && sel.EndLine >= sel.StartLine {
			text := sel.Text
			cut := false
			if len(text) > maxSelectionBytes {
				text, cut = clip.String(text, maxSelectionBytes, ""), true
			}
			if !utf8.ValidString(text) {
				text = strings.ToValidUTF8(text, "\uFFFD")
			}
			text = closingSelection.ReplaceAllStringFunc(text, func(m string) string { return "<\\/" + m[2:] })
			run["SELECTION"] = map[string]any{
				"PATH": p, "START_LINE": strconv.Itoa(sel.StartLine), "END_LINE": strconv.Itoa(sel.EndLine),
				"TEXT": strings.TrimRight(text, "\n"), "CUT": cut, "OUTSIDE": outsideRoots(roots, p),
			}
		} else {
			dropped++
		}
	}
	var inside, outside []string
	seen := map[string]bool{active: true}
	more := st.MoreOpenFiles
	for _, f := range st.OpenFiles {
		p, ok := shownPath(f)
		if !ok {
			dropped++
			continue
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		if len(inside)+len(outside) >= maxOpenFilesShown {
			more++
			continue
		}
		if outsideRoots(roots, p) {
			outside = append(outside, p)
		} else {
			inside = append(inside, p)
		}
	}
	if len(inside) > 0 {
		run["OTHER_FILES"] = inside
	}
	if len(outside) > 0 {
		run["OUTSIDE_FILES"] = outside
	}
	if more > 0 {
		run["MORE_OPEN_FILES"] = strconv.Itoa(more)
	}
	return dropped
}

// modules are the session's build manifests. The first look, and one after a turn wrote a
// manifest, happens now (FindModules reads a bounded number of directories); a list older than
// modulesTTL is used once more while a new look runs in the background, so the turn never waits
// for it.
func (s *Session) modules() []workspace.Module {
	now := time.Now()
	s.mu.Lock()
	list, at, busy := s.moduleList, s.modulesAt, s.modulesBusy
	stale := !at.IsZero() && now.Sub(at) >= modulesTTL
	var done chan struct{}
	if stale && !busy {
		done = make(chan struct{})
		s.modulesBusy, s.modulesDone = true, done
	}
	s.mu.Unlock()
	switch {
	case stale && !busy:
		go func() {
			defer close(done)
			next := workspace.FindModules(s.rootDirs())
			s.mu.Lock()
			s.moduleList, s.modulesAt, s.modulesBusy = next, time.Now(), false
			s.mu.Unlock()
		}()
		return list
	case !at.IsZero():
		return list
	}
	list = workspace.FindModules(s.rootDirs())
	s.mu.Lock()
	s.moduleList, s.modulesAt = list, now
	s.mu.Unlock()
	return list
}

func (s *Session) rootDirs() []string {
	if s.roots == nil {
		return nil
	}
	return s.roots.Dirs()
}

// modulesChanged makes the next context look for modules again, at once, when the turn wrote a
// manifest.
func (t *turn) modulesChanged() {
	if t.changes == nil {
		return
	}
	for _, f := range t.changes.list() {
		if workspace.IsManifest(f.Path) || (f.From != "" && workspace.IsManifest(f.From)) {
			t.s.mu.Lock()
			t.s.modulesAt = time.Time{}
			t.s.mu.Unlock()
			return
		}
	}
}

// modulesRun puts MODULES [{PATH, KIND, NAME}] and MORE_MODULES into run.
func modulesRun(list []workspace.Module, run prompts.Run) {
	var out []map[string]any
	for _, m := range list {
		if !printable(m.Path) {
			continue // a directory name of the repository's that would break the line
		}
		if len(out) == maxModulesShown {
			run["MORE_MODULES"] = strconv.Itoa(len(list) - maxModulesShown)
			break
		}
		out = append(out, map[string]any{"PATH": m.Path, "KIND": m.Kind, "NAME": m.Name})
	}
	if len(out) > 0 {
		run["MODULES"] = out
	}
}
