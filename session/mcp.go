package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/tools/policy"
)

// The MCP servers of a session: started with it (off the answer's critical path), offered to
// each turn as one snapshot, stopped with it. The rules themselves live in package mcp; this file
// is where a session meets them.

// mcpOptions are the only answers to a contributed tool's request: a server's tool is asked about
// every time, so there is no "always allow".
var mcpOptions = []protocol.PermissionOption{
	{OptionID: protocol.OptionAllowOnce, Name: "Allow once", Kind: "allow_once"},
	{OptionID: protocol.OptionRejectOnce, Name: "Reject", Kind: "reject_once"},
	{OptionID: protocol.OptionRejectAlways, Name: "Always reject in this project", Kind: "reject_always"},
}

// mcpServer is what a contributed tool tells the session about itself.
type mcpServer interface {
	Server() string
	RemoteName() string
}

// sourceMeta is the _meta that says where a contributed tool runs, nil for a built-in one.
func sourceMeta(tool tools.Tool) protocol.Meta {
	if srv, ok := tool.(mcpServer); ok {
		return protocol.Meta{protocol.MetaMCPServer: srv.Server()}
	}
	return nil
}

// mergeMeta is a new map holding m's keys and add's (add wins); m is not changed, since an
// update that shares it may still be waiting to be written.
func mergeMeta(m, add protocol.Meta) protocol.Meta {
	out := make(protocol.Meta, len(m)+len(add))
	maps.Copy(out, m)
	maps.Copy(out, add)
	return out
}

// startMCP opens the servers the client named (first) and the user settings name, returning at
// once; answered is closed once the client knows the session id, and notices wait for it.
func (s *Session) startMCP(requested []json.RawMessage, answered <-chan struct{}) {
	cfgs, err := mcp.ParseList("mcpServers", requested)
	if err != nil {
		// rpc validated the list already; a caller that did not gets a notice, not a crash.
		cfgs = nil
		go func() { <-answered; s.notice(protocol.SeverityWarning, "MCP servers not started", err.Error()) }()
	}
	var names []string
	for _, c := range cfgs {
		names = append(names, c.Name)
	}
	for i, raw := range s.settings().MCPServers {
		c, err := mcp.Parse(fmt.Sprintf("settings mcpServers[%d]", i), raw)
		if err != nil {
			go func() {
				<-answered
				s.notice(protocol.SeverityWarning, "An MCP server in the settings is malformed", err.Error())
			}()
			continue
		}
		if slices.Contains(names, c.Name) {
			continue // the client's entry of the same name wins
		}
		names = append(names, c.Name)
		cfgs = append(cfgs, c)
	}
	project := s.settings().ProjectMCPServers
	if len(cfgs) == 0 && len(project) == 0 {
		return
	}
	set := s.m.mcp.OpenSignIn(cfgs, s.m.d.Tools, func(sev, title, desc string) {
		<-answered
		s.notice(sev, title, desc)
	}, func(server string, err error) {
		<-answered
		s.mcpSignInNeeded(server, err)
	})
	s.mu.Lock()
	if s.mcp != nil || s.closed {
		s.mu.Unlock()
		set.Close()
		return
	}
	s.mcp = set
	s.mu.Unlock()
	if len(project) > 0 {
		go s.approveProjectMCP(set, project, names, answered)
	}
	go func() {
		// The servers' prompts become commands once they have started.
		select {
		case <-answered:
		case <-set.Done():
			return
		}
		select {
		case <-set.Ready():
		case <-set.Done():
			return
		}
		if len(set.Commands()) > 0 {
			s.announceCommands()
		}
	}()
}

// mcpCommands are the servers' prompts as slash commands (/SERVER.PROMPT).
func (s *Session) mcpCommands() []protocol.AvailableCommand {
	s.mu.Lock()
	set := s.mcp
	s.mu.Unlock()
	if set == nil {
		return nil
	}
	var out []protocol.AvailableCommand
	for _, c := range set.Commands() {
		ac := protocol.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.Hint != "" {
			ac.Input = &struct {
				Hint string `json:"hint"`
			}{Hint: c.Hint}
		}
		out = append(out, ac)
	}
	return out
}

// expandMCPPrompt turns a prompt that is one /SERVER.PROMPT command into the text the server's
// prompt renders; anything else, or a prompt the server fails (said by a notice), is left as is.
func (t *turn) expandMCPPrompt(blocks []protocol.ContentBlock) []protocol.ContentBlock {
	if len(blocks) != 1 || blocks[0].Type != "text" || !strings.HasPrefix(strings.TrimSpace(blocks[0].Text), "/") {
		return blocks
	}
	t.s.mu.Lock()
	set := t.s.mcp
	t.s.mu.Unlock()
	if set == nil {
		return blocks
	}
	text, ok, err := set.Expand(t.ctx, blocks[0].Text)
	if !ok {
		return blocks
	}
	if err != nil {
		t.s.notice(protocol.SeverityWarning, "The MCP prompt failed", err.Error())
		return blocks
	}
	return []protocol.ContentBlock{protocol.TextBlock(text)}
}

// approveProjectMCP asks the user, once per project, before each server the project file names
// starts: a cloned repository must not run a program of its choosing. It asks in every mode,
// auto included; allow_always is remembered for the project (for this exact configuration) and
// reject_always too. Approved servers join the session's set at the next turn.
func (s *Session) approveProjectMCP(set *mcp.Set, entries []json.RawMessage, taken []string, answered <-chan struct{}) {
	select {
	case <-answered:
	case <-set.Done():
		return
	}
	ctx, cancel := context.WithCancel(s.m.bgCtx)
	defer cancel()
	go func() {
		select {
		case <-set.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	cwd := s.roots.Cwd()
	for i, raw := range entries {
		c, err := mcp.ParseProject(fmt.Sprintf("project mcpServers[%d]", i), raw)
		if err != nil {
			s.notice(protocol.SeverityWarning, "An MCP server in the project settings is malformed", err.Error())
			continue
		}
		if slices.Contains(taken, c.Name) {
			continue // the user's server of that name wins
		}
		taken = append(taken, c.Name)
		sum := sha256.Sum256([]byte(c.Key()))
		pc := policy.Call{Tool: "mcp-server:" + c.Name + ":" + hex.EncodeToString(sum[:8]), Effect: tools.EffectExec}
		switch policy.Decide(policy.ModeAsk, s.m.projects.grants(cwd), pc) {
		case policy.Allow:
			set.Add(c)
			continue
		case policy.Deny:
			s.m.log.Info("project MCP server not started: the user rejected it for this project", zap.String("mcpServer", c.Name))
			continue
		}
		if s.m.d.Client == nil || !s.m.d.Client.CanAskPermission() {
			s.notice(protocol.SeverityWarning, "MCP server "+mcp.Clean(c.Name, 64)+" not started",
				"The project file asks for it, and this client cannot ask you to approve it.")
			continue
		}
		title := "Start MCP server " + mcp.Clean(c.Name, 64)
		input, card := mcpStartCard(c)
		res, err := s.m.d.Client.RequestPermission(ctx, protocol.RequestPermissionParams{SessionID: s.id,
			ToolCall: protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: "mcp_start_" + strconv.Itoa(i),
				Title: title, Kind: protocol.KindExecute, Status: protocol.StatusPending, RawInput: rawJSON(input),
				ToolContent: []protocol.ToolCallContent{{Type: "content", Content: &protocol.ContentBlock{Type: "text", Text: card}}}},
			Options: mcpStartOptions()})
		if ctx.Err() != nil {
			return
		}
		opt := ""
		if err == nil && res.Outcome.Outcome == "selected" {
			opt = res.Outcome.OptionID
		}
		switch opt {
		case protocol.OptionAllowAlways:
			s.m.projects.addGrant(cwd, policy.Grant{Tool: pc.Tool, Allow: true, Scope: policy.ScopeProject})
			set.Add(c)
		case protocol.OptionAllowOnce:
			set.Add(c)
		case protocol.OptionRejectAlways:
			s.m.projects.addGrant(cwd, policy.Grant{Tool: pc.Tool, Allow: false, Scope: policy.ScopeProject})
		}
	}
}

// mcpStartCard is what a project server's start request shows: its rawInput ({command, env} or
// {url, headers}) and the card's text, one line each for the command or URL, every variable and
// every header, secret values redacted (mcp.Config.Shown).
func mcpStartCard(c mcp.Config) (map[string]any, string) {
	env, headers := c.Shown()
	var b strings.Builder
	if c.Type == "http" {
		kind := "Streamable HTTP"
		if c.SSE {
			kind = "HTTP+SSE"
		}
		fmt.Fprintf(&b, "URL (%s): %s\n", kind, mcp.Clean(c.URL, 500))
		if len(headers) == 0 {
			b.WriteString("Headers: none\n")
		}
		for _, h := range headers {
			fmt.Fprintf(&b, "Header %s: %s\n", h.Name, h.Value)
		}
		return map[string]any{"url": c.URL, "headers": headers}, b.String()
	}
	argv := append([]string{c.Command}, c.Args...)
	shown := make([]string, len(argv))
	for i, a := range argv {
		shown[i] = mcp.Clean(a, 500)
	}
	fmt.Fprintf(&b, "Command: %s\n", strings.Join(shown, " "))
	if len(env) == 0 {
		b.WriteString("Environment: agentd's own (no variables set by the entry)\n")
	} else {
		b.WriteString("Environment set by the entry (on top of agentd's own):\n")
	}
	for _, e := range env {
		fmt.Fprintf(&b, "  %s=%s\n", e.Name, e.Value)
	}
	return map[string]any{"command": argv, "env": env}, b.String()
}

// mcpStartOptions answer a project server's start request, made per request as
// permissionOptions are: a package-level table's _meta map would be built by the init.
func mcpStartOptions() []protocol.PermissionOption {
	return []protocol.PermissionOption{
		{OptionID: protocol.OptionAllowAlways, Name: "Always allow in this project", Kind: "allow_always", Meta: protocol.Meta{"agentd/scope": "project"}},
		{OptionID: protocol.OptionAllowOnce, Name: "Allow once", Kind: "allow_once"},
		{OptionID: protocol.OptionRejectOnce, Name: "Reject", Kind: "reject_once"},
		{OptionID: protocol.OptionRejectAlways, Name: "Always reject in this project", Kind: "reject_always"},
	}
}

// closeMCP releases the session's servers.
func (s *Session) closeMCP() {
	s.mu.Lock()
	set := s.mcp
	s.mcp = nil
	s.mu.Unlock()
	if set != nil {
		set.Close()
	}
}

// toolset is the turn's snapshot of the tools: the built-in ones and the servers' as they are
// when the turn starts.
func (s *Session) toolset(ctx context.Context) *tools.Registry {
	s.mu.Lock()
	set := s.mcp
	s.mu.Unlock()
	base := s.m.variant(s.settings()).reg
	if set == nil {
		return base
	}
	snap := set.Snapshot(ctx)
	if snap == s.m.d.Tools {
		return base
	}
	return snap.Offered(needsMet(s.settings()))
}

// refreshTools takes the tools again when find_tools added some since the turn took them, so
// the model can call what it found from its next step (between steps, when no tool runs).
func (t *turn) refreshTools() {
	t.s.mu.Lock()
	set := t.s.mcp
	t.s.mu.Unlock()
	if g := set.FoundGen(); g != t.foundGen {
		t.foundGen = g
		t.reg = t.s.toolset(t.ctx)
	}
}

// specs are the turn's tool declarations: the built-in tools' as the prompt config renders
// them, then the servers' tools of the turn's snapshot, which come after them in its registry.
func (t *turn) specs() []providers.ToolSpec {
	v := t.s.m.variantOf(t.reg)
	specs := v.specs()
	if t.reg == v.reg {
		return specs
	}
	if t.s.parent != nil {
		return childSpecs(specs, v.reg, t.reg)
	}
	all := t.reg.Specs()
	if n := len(v.reg.List()); n <= len(all) {
		specs = append(slices.Clip(specs), all[n:]...)
	}
	return specs
}

// childSpecs are a subagent's declarations: the built-in ones its narrowed set keeps, as the
// prompt config renders them, then its servers' tools.
func childSpecs(builtin []providers.ToolSpec, base, reg *tools.Registry) []providers.ToolSpec {
	var out []providers.ToolSpec
	for _, sp := range builtin {
		if _, ok := reg.Lookup(sp.Name); ok {
			out = append(out, sp)
		}
	}
	for _, sp := range reg.Specs() {
		if _, ok := base.Lookup(sp.Name); !ok {
			out = append(out, sp)
		}
	}
	return out
}

// permitMCP decides a contributed tool's call: plan mode refuses it, a remembered "reject always"
// refuses it, and otherwise the user is asked, in every mode, auto included, whatever the
// server's annotations say.
func (t *turn) permitMCP(ctx context.Context, c *call, req tools.PermissionRequest, srv mcpServer) error {
	s := t.s
	if s.currentMode() == ModePlan {
		return &tools.ErrDenied{Reason: s.m.text("call.mcp_plan_refusal", nil)}
	}
	pc := policy.Call{Tool: "mcp:" + srv.Server() + ":" + srv.RemoteName(), Effect: tools.EffectExec}
	if policy.Decide(policy.ModeAsk, s.allGrants(), pc) == policy.Deny {
		return &tools.ErrDenied{Reason: s.m.text("approval.rejected_always", nil)}
	}
	if s.m.d.Client == nil || !s.m.d.Client.CanAskPermission() {
		return &tools.ErrDenied{Reason: s.m.text("approval.no_permission_ui", nil)}
	}
	shape := t.toolCallShape(c, req)
	shape.Kind = protocol.KindOther
	shape.Title = req.Title
	shape.Meta = mergeMeta(shape.Meta, protocol.Meta{protocol.MetaMCPServer: srv.Server()})
	res, err := s.m.d.Client.RequestPermission(ctx, protocol.RequestPermissionParams{SessionID: s.id, ToolCall: s.shapeForParent(shape), Options: mcpOptions})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return &tools.ErrDenied{Reason: s.m.text("approval.request_failed", prompts.Run{"ERROR": fmt.Sprint(err)})}
	}
	if res.Outcome.Outcome != "selected" {
		return &tools.ErrDenied{Reason: s.m.text("approval.dismissed", nil)}
	}
	switch res.Outcome.OptionID {
	case protocol.OptionAllowOnce:
		return nil
	case protocol.OptionRejectOnce:
		return &tools.ErrDenied{Reason: s.m.text("call.mcp_rejected", nil)}
	case protocol.OptionRejectAlways:
		s.remember(policy.GrantFor(pc, protocol.OptionRejectAlways, policy.ScopeProject))
		return &tools.ErrDenied{Reason: s.m.text("approval.rejected_always", nil)}
	}
	return &tools.ErrDenied{Reason: s.m.text("approval.unknown_option", prompts.Run{"OPTION": res.Outcome.OptionID})}
}
