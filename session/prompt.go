package session

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/rpc/protocol"

	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// systemPrompt is the stable prefix of every request: who the agent is, how it works and its
// tools. It depends only on the tool set, so provider prompt caches hit across turns and
// sessions; everything that changes (mode, roots, buffers, diagnostics) goes after it. The
// manager builds it once (Manager.system).
func systemPrompt(reg *tools.Registry) string {
	var b strings.Builder
	b.WriteString(`You are agentd, a coding agent that works inside the user's editor on the user's project.

How you work:
- You read files through the editor, so you see unsaved changes. Read a file before you change it, and change only what the task needs.
- Your edits are applied to the editor's buffers as reviewable changes and stay unsaved until the user saves them. If an edit is refused because the file changed, read it again and redo the edit.
- Paths in tool arguments are absolute inside the workspace roots, or relative to the working directory.
- File changes and programs may need the user's permission. If a call is rejected, do not retry it unchanged: explain, ask or take another way.
- Calls that only read run in parallel, so request independent reads together.
- Be concise. When you are done, say briefly what you changed and why, naming files.

Tools:
`)
	for _, t := range reg.List() {
		desc := t.Description()
		if i := strings.IndexByte(desc, '\n'); i >= 0 {
			desc = desc[:i]
		}
		fmt.Fprintf(&b, "- %s (%s): %s\n", t.Name(), t.Effect(), desc)
	}
	return b.String()
}

func (s *Session) modeLine() string {
	switch s.currentMode() {
	case ModeAuto:
		return "Permission mode: auto. Edits and programs run without asking the user; every edit is shown to the user.\n"
	case ModePlan:
		return "Permission mode: plan. You may only read. Do not call tools that change files or run programs; propose changes as text for the user to apply.\n"
	}
	return "Permission mode: ask. The user approves each edit and program before it runs.\n"
}

const (
	liveTimeout        = 300 * time.Millisecond
	maxLiveDiagnostics = 40
)

// liveContext describes the session's workspace now: roots, unsaved buffers, current
// diagnostics. A slow or incapable editor only shortens it.
func (t *turn) liveContext() string {
	s := t.s
	var b strings.Builder
	fmt.Fprintf(&b, "Working directory: %s\n", s.roots.Cwd())
	if dirs := s.roots.Dirs(); len(dirs) > 1 {
		fmt.Fprintf(&b, "Other workspace roots: %s\n", strings.Join(dirs[1:], ", "))
	}
	if s.ws == nil {
		return b.String()
	}
	ctx, cancel := context.WithTimeout(t.ctx, liveTimeout)
	defer cancel()
	var (
		wg    sync.WaitGroup
		bufs  []workspace.Buffer
		diags []workspace.FileDiagnostics
	)
	wg.Go(func() { bufs, _ = s.ws.DirtyBuffers(ctx) })
	wg.Go(func() { diags, _ = s.ws.Diagnostics(ctx, nil) })
	wg.Wait()
	if len(bufs) > 0 {
		var names []string
		for _, bu := range bufs {
			names = append(names, bu.Path)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "Files with unsaved changes in the editor: %s\n", strings.Join(names, ", "))
	}
	n := 0
	for _, fd := range diags {
		for _, d := range fd.Diagnostics {
			if d.Severity > 2 && d.Severity != 0 {
				continue
			}
			if n == 0 {
				b.WriteString("Current diagnostics (errors and warnings):\n")
			}
			n++
			if n > maxLiveDiagnostics {
				continue
			}
			sev := "error"
			if d.Severity == 2 {
				sev = "warning"
			}
			fmt.Fprintf(&b, "- %s:%d:%d %s: %s\n", fd.Path, d.Line, d.Column, sev, d.Message)
		}
	}
	if n > maxLiveDiagnostics {
		fmt.Fprintf(&b, "(%d more; call get_diagnostics for all)\n", n-maxLiveDiagnostics)
	}
	return b.String()
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
		return fmt.Sprintf("<file path=%q>(not readable: no workspace)</file>", p)
	}
	abs, err := t.s.roots.Resolve(p, false)
	if err != nil {
		return fmt.Sprintf("<file path=%q>(not readable: %v)</file>", p, err)
	}
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	args, _ := json.Marshal(map[string]string{"path": abs})
	res := tools.ReadFile.Run(ctx, &tools.Env{Roots: t.s.roots, WS: t.s.ws}, args)
	if res.IsError {
		return fmt.Sprintf("<file path=%q>(not readable: %s)</file>", abs, escapeEnvelope(res.Output))
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
