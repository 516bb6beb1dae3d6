package session

import (
	"strconv"

	"context"
	"encoding/json"
	"fmt"
	"github.com/agentd-dev/agentd/prompts"
	"net/url"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

const (
	liveTimeout        = 300 * time.Millisecond
	maxLiveDiagnostics = 40
)

// liveContext describes the session's workspace now (mode, roots, unsaved buffers, current
// diagnostics) with the prompt config's layout.context. A slow or incapable editor only
// shortens it.
func (t *turn) liveContext() string {
	s := t.s
	s.refreshInstructions()
	mode := s.currentMode()
	run := prompts.Run{
		"MODE_AUTO": mode == ModeAuto,
		"MODE_PLAN": mode == ModePlan,
		"MODE_ASK":  mode != ModeAuto && mode != ModePlan,
		"CWD":       s.roots.Cwd(),
		// Local, to the minute, with the zone: the context is sent again only when it changes.
		"CURRENT_TIME": s.m.now().Format("Monday 2006-01-02 15:04 MST (UTC-07:00)"),
	}
	if dirs := s.roots.Dirs(); len(dirs) > 1 {
		run["OTHER_ROOTS"] = dirs[1:]
	}
	t.modulesChanged()
	if s.ws == nil {
		modulesRun(s.modules(), run)
		return s.m.text("layout.context", run)
	}
	ctx, cancel := context.WithTimeout(t.ctx, liveTimeout)
	defer cancel()
	var (
		wg    sync.WaitGroup
		bufs  []workspace.Buffer
		diags []workspace.FileDiagnostics
		mods  []workspace.Module
	)
	// The questions to the editor overlap. The project's modules (from disk) are looked up on
	// this goroutine, whose stack has grown already, while the questions are out: a goroutine
	// started for it grew its stack again, every turn.
	wg.Go(func() { bufs, _ = s.ws.DirtyBuffers(ctx) })
	wg.Go(func() { diags, _ = s.ws.Diagnostics(ctx, nil) })
	if t.editor == nil {
		// Once per turn, before the first model call: what the user looks at does not change
		// while the model works.
		wg.Go(func() {
			t.editor = prompts.Run{}
			if st, ok := t.editorState(ctx); ok {
				if n := editorRun(st, s.roots, t.editor); n > 0 {
					s.m.log.Warn("malformed entries of the editor's state left out", zap.String("session", s.id), zap.Int("dropped", n))
				}
			}
		})
	}
	mods = s.modules()
	wg.Wait()
	for k, v := range t.editor {
		run[k] = v
	}
	modulesRun(mods, run)
	if len(bufs) > 0 {
		var names []string
		for _, bu := range bufs {
			names = append(names, bu.Path)
		}
		sort.Strings(names)
		run["DIRTY_FILES"] = names
	}
	n := 0
	var list []map[string]any
	for _, fd := range diags {
		for _, d := range fd.Diagnostics {
			if d.Severity > 2 && d.Severity != 0 {
				continue
			}
			n++
			if n > maxLiveDiagnostics {
				continue
			}
			sev := "error"
			if d.Severity == 2 {
				sev = "warning"
			}
			list = append(list, map[string]any{"PATH": fd.Path, "LINE": strconv.Itoa(d.Line), "COLUMN": strconv.Itoa(d.Column), "SEVERITY": sev, "MESSAGE": d.Message})
		}
	}
	run["DIAGNOSTICS"] = list
	if n > maxLiveDiagnostics {
		run["MORE_DIAGNOSTICS"] = strconv.Itoa(n - maxLiveDiagnostics)
	}
	return s.m.text("layout.context", run)
}

// readLink shows a resource_link's file to the model the way read_file would (the editor's
// unsaved text, read_file's size, binary and length limits, numbered lines), inside a <file>
// envelope the file's own text cannot close.
func (t *turn) readLink(b protocol.ContentBlock) string {
	p := b.URI
	if u, err := url.Parse(b.URI); err == nil && u.Scheme == "file" {
		p = u.Path
	}
	if t.s.ws == nil {
		return fmt.Sprintf("<file path=%q>%s</file>", p, t.texts().Render("attachments.no_workspace", nil))
	}
	abs, err := t.s.roots.Resolve(p, false)
	if err != nil {
		return fmt.Sprintf("<file path=%q>%s</file>", p, t.texts().Render("attachments.unreadable", prompts.Run{"ERROR": escapeEnvelope(err.Error())}))
	}
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	args, _ := json.Marshal(map[string]string{"path": abs})
	res := tools.ReadFile.Run(ctx, &tools.Env{Roots: t.s.roots, WS: t.s.ws}, args)
	if res.IsError {
		return fmt.Sprintf("<file path=%q>%s</file>", abs, t.texts().Render("attachments.unreadable", prompts.Run{"ERROR": escapeEnvelope(res.Output)}))
	}
	return fmt.Sprintf("<file path=%q>\n%s</file>", abs, escapeEnvelope(res.Output))
}

// closingTag matches what could end an envelope agentd wraps text in, in any case and with
// space before the '>'.
var closingTag = regexp.MustCompile(`(?i)</\s*(file|context)\b`)

// escapeEnvelope keeps text from closing the <file> or <context> envelope it is shown in: a
// closing tag inside becomes <\/file, which reads the same to the model and closes nothing.
func escapeEnvelope(text string) string {
	return closingTag.ReplaceAllStringFunc(text, func(m string) string { return "<\\/" + m[2:] })
}
