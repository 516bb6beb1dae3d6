package session

import (
	"context"
	"fmt"
	"github.com/agentd-dev/agentd/prompts"
	"runtime/debug"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
)

const (
	// maxParallelReads bounds the read calls of one response that run at once.
	maxParallelReads = 16
	// cancelGrace is how long a cancelled turn waits for running calls to notice before it
	// marks them failed and answers; the contract gives the whole cancel 100 ms.
	cancelGrace = 50 * time.Millisecond
	// maxOutputBytes bounds what one call returns to the model; maxShownBytes what the client is
	// shown as content.
	maxOutputBytes = 256 << 10
	maxShownBytes  = 16 << 10
	// diagnosticsWait is how long a file edit waits for the editor's diagnostics of the file to
	// settle, so the model sees at once what its edit broke. Editors without diagnostics answer
	// at once and cost nothing.
	diagnosticsWait = 1500 * time.Millisecond
)

// runCalls runs the calls of one response: read calls at once, then mutating and unknown ones
// one at a time in the model's order, so permission prompts never race and writes stay
// ordered. Results go to the history in the model's call order. It reports whether any
// mutating call succeeded.
func (t *turn) runCalls(calls []*call) (mutated bool) {
	t.planMu.Lock()
	t.planIndex = 0
	t.planMu.Unlock()
	var reads, rest []*call
	for _, c := range calls {
		switch {
		case c.invalid != "":
			t.finishCall(c, tools.Result{Output: "Error: " + c.invalid, IsError: true}, "")
		case c.tool.Effect() == tools.EffectRead:
			reads = append(reads, c)
		default:
			rest = append(rest, c)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if len(reads) == 1 {
			t.exec(reads[0]) // the usual case: no goroutine to start and wait for
		} else {
			var wg sync.WaitGroup
			sem := make(chan struct{}, maxParallelReads)
			for _, c := range reads {
				wg.Go(func() {
					sem <- struct{}{}
					defer func() { <-sem }()
					t.exec(c)
				})
			}
			wg.Wait()
		}
		for _, c := range rest {
			if t.ctx.Err() != nil {
				return
			}
			t.exec(c)
		}
	}()
	select {
	case <-done:
	case <-t.ctx.Done():
		select {
		case <-done:
		case <-time.After(cancelGrace):
		}
	}
	res := providers.Message{Role: providers.RoleUser}
	var images []providers.Part
	for _, c := range calls {
		t.finishCall(c, tools.Result{Output: t.s.m.text("loop.cancelled", nil), IsError: true}, "")
		c.mu.Lock()
		r := c.res
		c.mu.Unlock()
		if !r.IsError && c.tool != nil && c.tool.Effect() != tools.EffectRead {
			mutated = true
		}
		res.Parts = append(res.Parts, providers.Part{Type: providers.PartToolResult, ToolCallID: c.id, ToolName: c.name, Text: r.Output, IsError: r.IsError})
		for _, img := range r.Images {
			images = append(images, providers.Part{Type: providers.PartImage, ToolCallID: c.id, MimeType: img.MimeType, Data: img.Data})
		}
	}
	// A result's images follow all the results, tied to theirs by ToolCallID: every dialect
	// wants the results first (Anthropic's tool_result blocks, OpenAI's tool messages).
	res.Parts = append(res.Parts, images...)
	t.s.appendHistory(res)
	return mutated
}

// exec runs one call and reports it.
func (t *turn) exec(c *call) {
	if t.ctx.Err() != nil {
		return
	}
	s := t.s
	// in_progress means running (ACP): a read starts at once; a write or exec call stays
	// pending while its permission is asked (the request's toolCall says pending too) and
	// starts once it is granted. A call refused goes from pending to failed.
	var startOnce sync.Once
	start := func() {
		startOnce.Do(func() {
			s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: c.id, Status: protocol.StatusInProgress})
		})
	}
	if c.tool.Effect() == tools.EffectRead {
		start()
	}
	s.m.trace.event(s.id, "tool_call", map[string]any{"id": c.id, "tool": c.name, "args": c.final})
	permitted := t.permitFor(c)
	env := &tools.Env{
		Roots: s.roots,
		WS:    t.workspace(),
		Permit: func(ctx context.Context, req tools.PermissionRequest) error {
			if m, ok := req.Meta[tools.MetaSandbox]; ok {
				s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: c.id, Meta: protocol.Meta{tools.MetaSandbox: m}})
			}
			if err := permitted(ctx, req); err != nil {
				return err
			}
			start()
			return nil
		},
		AllowShell:      t.set.AllowShell,
		Semantic:        t.semanticIndex(),
		SearchWeb:       t.webSearcher(),
		DiagnosticsWait: diagnosticsWait,
		Skills:          s.skills(),
		RunAgent:        t.agentRunner(c),
		Elicit:          t.elicitFor(c),
		Progress: func(text string) {
			c.mu.Lock()
			done := c.finished
			c.mu.Unlock()
			if done {
				return
			}
			s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: c.id,
				ToolContent: []protocol.ToolCallContent{{Type: "content", Content: &protocol.ContentBlock{Type: "text", Text: clip.String(text, maxShownBytes, "")}}}})
		},
	}
	env.HideEnv = t.s.m.d.KeyEnvNames(t.set)
	if c.tool.Effect() == tools.EffectExec {
		env.Sandbox = t.sandboxEnv()
	}
	env.Programs = s.backgroundPrograms()
	env.ToolCallID, env.ProgramEnded = c.id, s.programEnded
	if c.tool.Effect() == tools.EffectExec && t.set.SaveBeforeRun != config.SaveNone {
		t.saveBeforeExec(c, env)
	}
	res := t.runToolWithHooks(c, env)
	c.mu.Lock()
	denied := c.denied
	c.mu.Unlock()
	t.finishCall(c, res, denied)
}

func (t *turn) safeRun(c *call, env *tools.Env) (res tools.Result) {
	defer func() {
		if r := recover(); r != nil {
			t.s.m.log.Error(fmt.Sprintf("tool %s panicked: %v\n%s", c.name, r, debug.Stack()))
			t.s.notice(protocol.SeverityError, fmt.Sprintf("The tool %s failed unexpectedly", c.name), fmt.Sprint(r))
			res = tools.Result{Output: t.s.m.text("loop.tool_crashed", prompts.Run{"TOOL": c.name, "ERROR": fmt.Sprint(r)}), IsError: true}
		}
	}()
	return c.tool.Run(t.ctx, env, c.final)
}

// finishCall records a call's result and sends its final update once; later calls for the same
// call (a result arriving after the turn gave up on it) are dropped.
func (t *turn) finishCall(c *call, res tools.Result, denied string) {
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		return
	}
	c.finished = true
	if len(res.Output) > maxOutputBytes {
		res.Output = clip.String(res.Output, maxOutputBytes, "") + fmt.Sprintf("\n[output truncated at %d bytes]", maxOutputBytes)
	}
	c.res = res
	recorded := c.recorded
	c.mu.Unlock()
	t.s.noteEdits(res.Diffs)

	status := protocol.StatusCompleted
	if res.IsError {
		status = protocol.StatusFailed
	}
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: c.id, Status: status}
	for _, d := range res.Diffs {
		u.ToolContent = append(u.ToolContent, protocol.ToolCallContent{Type: "diff", Path: d.Path, OldText: d.OldText, NewText: d.NewText})
	}
	if res.Output != "" {
		u.ToolContent = append(u.ToolContent, protocol.ToolCallContent{Type: "content", Content: &protocol.ContentBlock{Type: "text", Text: clip.String(res.Output, maxShownBytes, "")}})
	}
	for _, l := range res.Locations {
		u.Locations = append(u.Locations, protocol.ToolLocation{Path: l.Path, Line: l.Line})
	}
	switch {
	case denied != "":
		u.RawOutput = rawJSON(map[string]any{"denied": true, "reason": denied})
	case res.Raw != nil:
		u.RawOutput = rawJSON(res.Raw)
	case res.IsError:
		u.RawOutput = rawJSON(map[string]any{"error": clip.String(res.Output, maxShownBytes, "")})
	}
	t.s.update(u)
	t.s.m.trace.event(t.s.id, "tool_result", map[string]any{"id": c.id, "tool": c.name, "status": status, "denied": denied != "", "output": clip.String(res.Output, 4096, "")})

	// The transcript keeps the call's final state in one record, as load replays it.
	rec := u
	if !recorded {
		rec.SessionUpdate = protocol.UpdateToolCall
		rec.Title, rec.Kind = c.title, c.kind
	}
	if m := sourceMeta(c.tool); m != nil {
		rec.Meta = mergeMeta(rec.Meta, m)
	}
	if len(c.final) > 0 && len(c.final) <= 64<<10 && !recorded {
		rec.RawInput = c.final
	}
	t.s.record(record{T: recUpdate, Update: &rec})

	if plan, ok := res.Raw.(tools.Plan); ok && !res.IsError && denied == "" {
		t.sendPlan(c, plan)
	}
}

// sendPlan shows the plan an update_plan call set (always the full list) and keeps it in the
// transcript, after the call that set it, so load replays it in place. Read calls of one response
// finish concurrently, so a plan from a call the model made before the last one shown is
// dropped: the client ends with the model's last plan.
func (t *turn) sendPlan(c *call, plan tools.Plan) {
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdatePlan, Entries: make([]protocol.PlanEntry, 0, len(plan.Entries))}
	for _, e := range plan.Entries {
		u.Entries = append(u.Entries, protocol.PlanEntry{Content: e.Content, Priority: e.Priority, Status: e.Status})
	}
	t.planMu.Lock()
	defer t.planMu.Unlock()
	if c.index < t.planIndex {
		return
	}
	t.planIndex = c.index
	t.s.update(u)
	t.s.record(record{T: recUpdate, Update: &u})
}
