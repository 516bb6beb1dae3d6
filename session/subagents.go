package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
)

// Subagents: the agent tool runs a child conversation for one call of its parent's turn. The
// child is a Session of its own history (none of the parent's messages), its definition's system
// text and tools, and the parent's everything else: roots, workspace, mode (read at each call,
// never its own), grants, cost, edits and the turn's checkpoint. What it shows goes out on the
// parent's id, its tool calls nested under the agent call by _meta["agentd/parentToolCallId"];
// its records go into the parent's transcript, marked, so load replays its calls in place and
// keeps its messages out of the parent's history. A child has no agent tool and no RunAgent: it
// cannot start children. Its turn is the parent's loop with subagents.maxIterations steps and a
// budget of subagents.maxTokens tokens, which the parent's usage and cost include.

// maxAgentsPerTurn bounds the subagents one turn of the parent starts, whatever the model asks.
const maxAgentsPerTurn = 16

// agentDefs are the session's subagent definitions: the user's, the built-in explore, the
// project's (refreshInstructions reads them with the skills).
func (s *Session) agentDefs() []tools.AgentDef {
	s = s.top()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.instr == nil || s.instr.agents == nil {
		return []tools.AgentDef{tools.ExploreAgent()}
	}
	return s.instr.agents
}

// discoverAgents reads the definitions of the session's roots and the user's config directory.
func (s *Session) discoverAgents() ([]tools.AgentDef, []tools.SkillProblem) {
	known := func(name string) bool { _, ok := s.m.d.Tools.Lookup(name); return ok }
	return tools.DiscoverAgents(tools.AgentDirs(s.roots.Dirs(), userConfigDir()), known)
}

// listedAgents are the definitions the system prompt lists: all but the built-in explore, which
// the agent tool's description names.
func listedAgents(defs []tools.AgentDef) []tools.AgentDef {
	var out []tools.AgentDef
	for _, d := range defs {
		if d.Path != "" {
			out = append(out, d)
		}
	}
	return out
}

// agentsRun is what the definitions add to the system prompt's run values: AGENTS, the name and
// description of each but explore.
func agentsRun(defs []tools.AgentDef) prompts.Run {
	listed := listedAgents(defs)
	if len(listed) == 0 {
		return prompts.Run{}
	}
	list := make([]map[string]any, len(listed))
	for i, d := range listed {
		desc := strings.Join(strings.Fields(d.Description), " ")
		list[i] = map[string]any{"NAME": d.Name, "DESCRIPTION": escapeClosing(desc)}
	}
	return prompts.Run{"AGENTS": list}
}

func sameAgents(a, b []tools.AgentDef) bool {
	return slices.EqualFunc(a, b, func(x, y tools.AgentDef) bool {
		return x.Name == y.Name && x.Description == y.Description && x.Path == y.Path && x.Model == y.Model &&
			x.System == y.System && slices.Equal(x.Tools, y.Tools)
	})
}

// agentProblems are the definition files the last discovery did not load, one line each.
func (s *Session) agentProblems() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.instr == nil {
		return ""
	}
	return s.instr.agentProblems
}

// noticeAgents tells the user which definition files were not loaded, and why.
func (s *Session) noticeAgents(probs string) {
	if probs != "" {
		s.notice(protocol.SeverityWarning, "Agent definitions not loaded", probs)
	}
}

// agentRunner is the Env.RunAgent of call c: nil in a child.
func (t *turn) agentRunner(c *call) func(context.Context, tools.AgentRequest) tools.Result {
	if t.s.parent != nil {
		return nil
	}
	return func(ctx context.Context, req tools.AgentRequest) tools.Result { return t.runAgent(ctx, c, req) }
}

// runAgent runs one subagent to its end and returns its final answer.
func (t *turn) runAgent(ctx context.Context, c *call, req tools.AgentRequest) tools.Result {
	s := t.s
	defs := s.agentDefs()
	i := slices.IndexFunc(defs, func(d tools.AgentDef) bool { return d.Name == req.Agent })
	if i < 0 {
		names := make([]string, len(defs))
		for j, d := range defs {
			names[j] = d.Name
		}
		return tools.Errorf("field agent: no agent named %q; the agents are: %s", req.Agent, strings.Join(names, ", "))
	}
	def := defs[i]
	t.subMu.Lock()
	if t.agents >= maxAgentsPerTurn {
		t.subMu.Unlock()
		return tools.Errorf("this turn already started %d subagents, the most one turn may; do the rest yourself", maxAgentsPerTurn)
	}
	t.agents++
	t.subMu.Unlock()

	sem := s.agentSemaphore(t.set.Subagents.MaxConcurrent)
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return tools.Errorf("the subagent was cancelled before it started")
	}
	defer func() { <-sem }()

	prov, pcfg, err := t.agentModel(ctx, def)
	if err != nil {
		return tools.Errorf("agent %q: %v", def.Name, err)
	}
	t.recordAgentStart(c)
	child := s.newChild(c.id, def)
	ct := &turn{s: child, ctx: ctx, set: child.settings(), reg: t.childTools(def), changes: t.changes, prov: prov, pcfg: pcfg, budget: t.set.Subagents.MaxTokens}
	ct.caps = capabilitiesOf(ct.set, pcfg)
	ct.window = ct.caps.ContextWindow
	ct.mode = s.m.toolMode(ct.set, pcfg, ct.caps)
	ct.nudges.start = 0
	child.appendHistory(providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: req.Prompt}}})
	s.m.trace.event(s.id, "subagent_start", map[string]any{"call": c.id, "agent": def.Name})
	res := ct.loop()
	t.addTurnUsage(ct.usage)
	t.showCost()
	s.m.trace.event(s.id, "subagent_end", map[string]any{"call": c.id, "agent": def.Name, "stopReason": res.StopReason, "tokens": ct.usage.TotalTokens})

	raw := map[string]any{"agent": def.Name, "stopReason": res.StopReason, "usage": ct.usage}
	answer := child.lastAnswer()
	switch {
	case ctx.Err() != nil || res.StopReason == protocol.StopCancelled:
		return tools.Result{Output: "The subagent was cancelled.", IsError: true, Raw: raw}
	case res.Meta != nil && res.Meta["agentd/error"] != nil:
		em, _ := res.Meta["agentd/error"].(protocol.ErrorMeta)
		return tools.Result{Output: "The subagent's model request failed: " + em.Message, IsError: true, Raw: raw}
	case res.StopReason == protocol.StopMaxTurnRequests && ct.overBudget:
		answer = strings.TrimSpace(answer + fmt.Sprintf("\n\n(The subagent stopped at its budget of %d tokens before it finished.)", t.set.Subagents.MaxTokens))
	case res.StopReason == protocol.StopMaxTurnRequests:
		answer = strings.TrimSpace(answer + fmt.Sprintf("\n\n(The subagent stopped after %d steps before it finished.)", ct.set.MaxIterations))
	}
	if strings.TrimSpace(answer) == "" {
		return tools.Result{Output: "The subagent ended without an answer.", IsError: true, Raw: raw}
	}
	return tools.Result{Output: answer, Raw: raw}
}

// agentModel is the provider and model a definition's child runs on: the parent's, models.fast
// ("fast"), or a provider of the user's settings named by its id or by its model. A project's
// definition is data from a repository that may have been cloned from anyone: it may not send the
// user's code to another of the user's providers than the session's unless the user trusts the
// project, so its model is then ignored, with a notice.
func (t *turn) agentModel(ctx context.Context, def tools.AgentDef) (providers.Provider, providers.Config, error) {
	s := t.s
	switch {
	case def.Model == "":
		return t.prov, t.pcfg, nil
	case def.Model == config.FastModelKey:
		p, c, _ := s.m.sideModel(s.providerCtx(ctx, t.set), t.set, t.prov, t.pcfg)
		return p, c, nil
	case def.Project && !t.set.Trusts(def.Root):
		s.notice(protocol.SeverityWarning, "A project agent's model was ignored",
			fmt.Sprintf("%s names the model %q. A project's agent definition may not choose where your code is sent unless you trust the project (trustedProjects); the agent %s runs on the session's model.", def.Path, def.Model, def.Name))
		return t.prov, t.pcfg, nil
	}
	id := def.Model
	if _, ok := t.set.Providers[id]; !ok {
		id = ""
		for pid, ps := range t.set.Providers {
			if ps.Model == def.Model && (id == "" || pid < id) {
				id = pid
			}
		}
	}
	if id == "" {
		ids := make([]string, 0, len(t.set.Providers))
		for pid := range t.set.Providers {
			ids = append(ids, pid)
		}
		slices.Sort(ids)
		return nil, providers.Config{}, fmt.Errorf("its model %q (%s) is neither a provider of your settings (%s), the model of one, nor \"fast\"", def.Model, def.Path, strings.Join(ids, ", "))
	}
	return s.m.d.Providers.Provider(s.providerCtx(ctx, t.set), id)
}

// childTools is the parent turn's tool set narrowed to what the definition allows: a definition
// can only take tools away, and never keeps agent.
func (t *turn) childTools(def tools.AgentDef) *tools.Registry {
	var keep []tools.Tool
	for tl := range t.reg.All() {
		if def.Allows(tl.Name(), tl.Effect()) {
			keep = append(keep, tl)
		}
	}
	return tools.NewRegistry(keep...)
}

// newChild is the child conversation of the agent call callID.
func (s *Session) newChild(callID string, def tools.AgentDef) *Session {
	c := &Session{
		m: s.m, id: s.id, cwd: s.cwd, dirs: s.dirs, roots: s.roots, ws: s.ws, file: s.file,
		parent: s, parentCall: callID, noElide: s.noElide,
		msgSeq:   s.msgSeq + "_" + strings.Map(func(r rune) rune { return keepIDRune(r) }, callID),
		pending:  map[*pendingPerm]struct{}{},
		programs: s.backgroundPrograms(),
	}
	c.childSystem = def.System + "\n\nWorking directory: " + s.roots.Cwd()
	parent := s.settings
	c.set = func() config.Settings {
		st := parent()
		st.MaxIterations = st.Subagents.MaxIterations
		// The side passes and the turn's own hooks belong to the parent's turn.
		st.AnswerReview = false
		st.Hooks.Stop, st.Hooks.PromptSubmit, st.Hooks.SessionStart = nil, nil, nil
		return st
	}
	return c
}

func keepIDRune(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
		return r
	}
	return -1
}

// agentSemaphore bounds the session's children running at once.
func (s *Session) agentSemaphore(n int) chan struct{} {
	s = s.top()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.agentSem == nil {
		s.agentSem = make(chan struct{}, max(n, 1))
	}
	return s.agentSem
}

// lastAnswer is the text of the child's last assistant message.
func (s *Session) lastAnswer() string {
	h := s.historySnapshot()
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role != providers.RoleAssistant {
			continue
		}
		var b strings.Builder
		for _, p := range h[i].Parts {
			if p.Type == providers.PartText {
				b.WriteString(p.Text)
			}
		}
		if b.Len() > 0 {
			return b.String()
		}
	}
	return ""
}

// forParent is a child's update as its parent's client gets it: only its tool calls and notices
// (its text, plan and usage are its parent's to show: the answer comes back as the agent call's
// result), with the child's call ids kept apart from the parent's and the agent call named.
func (s *Session) forParent(u protocol.SessionUpdate) (protocol.SessionUpdate, bool) {
	switch u.SessionUpdate {
	case protocol.UpdateToolCall, protocol.UpdateToolCallUpdate, protocol.UpdateNotice:
	default:
		return u, false
	}
	if u.ToolCallID != "" {
		u.ToolCallID = s.parentCall + "/" + u.ToolCallID
	}
	u.Meta = mergeMeta(u.Meta, protocol.Meta{protocol.MetaParentToolCall: s.parentCall})
	return u, true
}

// shapeForParent is a permission request's toolCall as the parent's client gets it.
func (s *Session) shapeForParent(u protocol.SessionUpdate) protocol.SessionUpdate {
	if s.parent == nil {
		return u
	}
	out, _ := s.forParent(u)
	return out
}

// childRecords are the records of a child that go into its parent's transcript: its messages
// (kept, never loaded as the parent's history) and what its parent's client was shown.
func (s *Session) childRecords(rs []record) []record {
	out := make([]record, 0, len(rs))
	for _, r := range rs {
		switch r.T {
		case recMessage:
		case recUpdate:
			if r.Update == nil {
				continue
			}
			u, ok := s.forParent(*r.Update)
			if !ok {
				continue
			}
			r.Update = &u
		default:
			continue
		}
		r.Parent = s.parentCall
		out = append(out, r)
	}
	return out
}

// recordAgentStart keeps the agent call in the transcript before its child's calls, so load
// replays them under it; its final state follows them (finishCall).
func (t *turn) recordAgentStart(c *call) {
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCall, ToolCallID: c.id, Title: c.title, Kind: c.kind, Status: protocol.StatusInProgress}
	if len(c.final) <= 64<<10 {
		u.RawInput = c.final
	}
	c.mu.Lock()
	c.recorded = true
	c.mu.Unlock()
	t.s.record(record{T: recUpdate, Update: &u})
}

// addTurnUsage adds a model call's (or a child's) usage to the turn's.
func (t *turn) addTurnUsage(u protocol.Usage) {
	t.subMu.Lock()
	defer t.subMu.Unlock()
	t.usage.InputTokens += u.InputTokens
	t.usage.OutputTokens += u.OutputTokens
	t.usage.CachedReadTokens += u.CachedReadTokens
	t.usage.CachedWriteTokens += u.CachedWriteTokens
	t.usage.ThoughtTokens += u.ThoughtTokens
	t.usage.TotalTokens += u.TotalTokens
}

// tokensUsed is the turn's tokens so far, its children's included.
func (t *turn) tokensUsed() int {
	t.subMu.Lock()
	defer t.subMu.Unlock()
	return t.usage.TotalTokens
}

// showCost sends the parent's meter again once a child ended, with the session's cost that now
// includes the child's calls.
func (t *turn) showCost() {
	s := t.s
	s.mu.Lock()
	cost := s.cost
	used, size := s.lastUsed, max(t.window, 0)
	var up protocol.SessionUpdate
	if cost != nil {
		up = protocol.SessionUpdate{SessionUpdate: protocol.UpdateUsageUpdate, Used: &used, Size: &size, Cost: cost}
		s.usage = &up
	}
	s.mu.Unlock()
	if cost == nil {
		return
	}
	s.update(up)
	s.record(record{T: recUsage, Update: &up, Cost: cost})
}
