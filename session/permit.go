package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/prompts"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/tools/policy"
)

type grant = policy.Grant

// permissionTimeout is how long a permission request waits for the user before it ends as a
// denial the model is told timed out (the contract's 30 minutes).
const permissionTimeout = 30 * time.Minute

// pendingPerm is a permission request waiting for the user. A remembered decision made on
// another request of the session answers it through answer.
type pendingPerm struct {
	call   policy.Call
	answer chan error
	cancel context.CancelFunc
}

// permissionOptions are the standard options, made per request: their _meta maps would be built
// by the package's init at every start as a package-level table.
func permissionOptions() []protocol.PermissionOption {
	return []protocol.PermissionOption{
		{OptionID: protocol.OptionAllowOnce, Name: "Allow once", Kind: "allow_once"},
		{OptionID: protocol.OptionAllowSession, Name: "Allow for this session", Kind: "allow_always", Meta: protocol.Meta{"agentd/scope": "session"}},
		{OptionID: protocol.OptionAllowAlways, Name: "Always allow in this project", Kind: "allow_always", Meta: protocol.Meta{"agentd/scope": "project"}},
		{OptionID: protocol.OptionRejectOnce, Name: "Reject", Kind: "reject_once"},
		{OptionID: protocol.OptionRejectAlways, Name: "Always reject in this project", Kind: "reject_always"},
	}
}

// optionsFor is the options of a permission request: the standard ones, whose lasting answers name
// the host for a fetch (they cover that host only, see policy.GrantFor).
func optionsFor(req tools.PermissionRequest) []protocol.PermissionOption {
	opts := sandboxOptions(req, permissionOptions())
	if req.Host == "" {
		return opts
	}
	for i := range opts {
		switch opts[i].OptionID {
		case protocol.OptionAllowSession:
			opts[i].Name = "Allow " + req.Host + " for this session"
		case protocol.OptionAllowAlways:
			opts[i].Name = "Always allow " + req.Host + " in this project"
		case protocol.OptionRejectAlways:
			opts[i].Name = "Always reject " + req.Host + " in this project"
		}
	}
	return opts
}

var switchOptions = []protocol.PermissionOption{
	{OptionID: protocol.OptionSwitchAsk, Name: "Switch to ask mode", Kind: "allow_once"},
	{OptionID: protocol.OptionSwitchAuto, Name: "Switch to auto mode", Kind: "allow_always"},
	{OptionID: protocol.OptionRejectOnce, Name: "Stay in plan mode", Kind: "reject_once"},
}

// grantsFor returns the session's grants plus the project's persisted ones.
func (s *Session) allGrants() []grant {
	if s.parent != nil {
		return s.parent.allGrants()
	}
	s.mu.Lock()
	out := append([]grant(nil), s.grants...)
	s.mu.Unlock()
	return append(out, s.m.projects.grants(s.roots.Cwd())...)
}

// permitFor is the Env.Permit of one call: the policy decides from the mode at the moment of the
// call, and in ask mode the user is asked with the diff or the command line.
func (t *turn) permitFor(c *call) func(ctx context.Context, req tools.PermissionRequest) error {
	return func(ctx context.Context, req tools.PermissionRequest) error {
		err := t.permit(ctx, c, req)
		if d := (*tools.ErrDenied)(nil); errors.As(err, &d) {
			c.mu.Lock()
			c.denied = d.Reason
			c.mu.Unlock()
		}
		decision := "allow"
		if err != nil {
			decision = err.Error()
		}
		t.s.m.trace.event(t.s.id, "permission", map[string]any{"id": c.id, "tool": c.name, "decision": decision})
		return err
	}
}

func (t *turn) permit(ctx context.Context, c *call, req tools.PermissionRequest) error {
	s := t.s
	if srv, ok := c.tool.(mcpServer); ok {
		return t.permitMCP(ctx, c, req, srv)
	}
	effect := tools.EffectWrite
	if c.tool != nil {
		effect = c.tool.Effect()
	}
	pc := policy.Call{Tool: c.name, Effect: effect, Paths: req.Paths, Command: req.Command, Env: req.Env, Stdin: req.Stdin, Host: req.Host, Sandbox: req.Sandbox}
	mode := policy.Mode(s.currentMode())
	if mode == policy.ModeAuto && t.mode == config.ToolCallingText {
		// A call that came through the text protocol may be an envelope the model copied from
		// what it read (a README, a web page): in auto mode it is asked about, as in ask mode.
		mode = policy.ModeAsk
	}
	switch policy.Decide(mode, s.allGrants(), pc) {
	case policy.Allow:
		return nil
	case policy.Deny:
		return &tools.ErrDenied{Reason: t.s.m.text("approval.rejected_always", nil)}
	case policy.PlanRefuse:
		return t.leavePlan(ctx, c, req)
	}
	if s.m.d.Client == nil || !s.m.d.Client.CanAskPermission() {
		return &tools.ErrDenied{Reason: t.s.m.text("approval.no_permission_ui", nil)}
	}
	return t.ask(ctx, c, req, pc)
}

// toolCallShape is the tool_call_update-shaped object a permission request carries.
func (t *turn) toolCallShape(c *call, req tools.PermissionRequest) protocol.SessionUpdate {
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: c.id, Title: c.title, Kind: c.kind, Status: protocol.StatusPending}
	if req.Title != "" {
		u.Title = req.Title
	}
	if req.Kind != "" {
		u.Kind = req.Kind
	}
	for _, d := range req.Diffs {
		u.ToolContent = append(u.ToolContent, protocol.ToolCallContent{Type: "diff", Path: d.Path, OldText: d.OldText, NewText: d.NewText})
	}
	for _, p := range req.Paths {
		u.Locations = append(u.Locations, protocol.ToolLocation{Path: p})
	}
	for k, v := range req.Meta {
		if u.Meta == nil {
			u.Meta = protocol.Meta{}
		}
		u.Meta[k] = v
	}
	if len(req.Command) > 0 {
		cwd := req.Cwd
		if cwd == "" {
			cwd = t.s.roots.Cwd()
		}
		in := map[string]any{"command": req.Command, "cwd": cwd}
		// The clients show rawInput.env (an object) and rawInput.stdin (a string) on the card; the
		// content block says the same for a client that shows only content.
		if len(req.Env) > 0 {
			in["env"] = req.Env
		}
		if req.Stdin != "" {
			in["stdin"] = req.Stdin
		}
		// The escalation question shows the model's reason (run_program {sandbox: false}).
		if req.Sandbox == tools.SandboxEscape {
			in["sandbox"], in["justification"] = false, req.Justification
		}
		u.RawInput = rawJSON(in)
		if text := envStdinText(req.Env, req.Stdin); text != "" {
			tb := protocol.TextBlock(text)
			u.ToolContent = append(u.ToolContent, protocol.ToolCallContent{Type: "content", Content: &tb})
		}
	} else {
		u.RawInput = c.final
	}
	return u
}

// ask sends agent/session/request_permission and applies the answer. A remembered answer given
// to another pending request of the session may answer this one first.
func (t *turn) ask(ctx context.Context, c *call, req tools.PermissionRequest, pc policy.Call) error {
	s := t.s
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &pendingPerm{call: pc, answer: make(chan error, 1), cancel: cancel}
	s.mu.Lock()
	s.pending[p] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, p)
		s.mu.Unlock()
	}()

	type reply struct {
		res protocol.RequestPermissionResult
		err error
	}
	got := make(chan reply, 1)
	// An unanswered question ends as a denial after permissionTimeout; the request is
	// cancelled, so the client closes its card.
	timedOut := make(chan struct{})
	stopTimer := s.m.afterFunc(permissionTimeout, func() { close(timedOut) })
	defer stopTimer()
	params := protocol.RequestPermissionParams{SessionID: s.id, ToolCall: s.shapeForParent(t.toolCallShape(c, req)), Options: optionsFor(req)}
	go func() {
		res, err := s.m.d.Client.RequestPermission(rctx, params)
		got <- reply{res, err}
	}()
	var r reply
	select {
	case err := <-p.answer:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-timedOut:
		cancel()
		return &tools.ErrDenied{Reason: t.s.m.text("approval.timed_out", nil)}
	case r = <-got:
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if r.err != nil && errors.Is(r.err, context.DeadlineExceeded) {
		// The connection's own deadline for a permission request (rpc.PermissionCallTimeout).
		return &tools.ErrDenied{Reason: t.s.m.text("approval.timed_out", nil)}
	}
	if r.err != nil {
		select {
		case err := <-p.answer:
			return err
		default:
		}
		return &tools.ErrDenied{Reason: t.s.m.text("approval.request_failed", prompts.Run{"ERROR": fmt.Sprint(r.err)})}
	}
	if r.res.Outcome.Outcome != "selected" {
		return &tools.ErrDenied{Reason: t.s.m.text("approval.dismissed", nil)}
	}
	opt := r.res.Outcome.OptionID
	var g grant
	switch opt {
	case protocol.OptionAllowOnce:
	case policy.OptionAllowSandboxed:
		g = policy.GrantFor(pc, opt, policy.ScopeSession)
	case protocol.OptionAllowSession:
		g = policy.GrantFor(pc, opt, policy.ScopeSession)
	case protocol.OptionAllowAlways, protocol.OptionRejectAlways:
		g = policy.GrantFor(pc, opt, policy.ScopeProject)
	case protocol.OptionRejectOnce:
		if text, _ := r.res.Outcome.Meta[protocol.MetaInstruction].(string); strings.TrimSpace(text) != "" {
			return &tools.ErrDenied{Reason: t.s.m.text("approval.corrected_with_instruction", prompts.Run{"INSTRUCTION": text})}
		}
		return &tools.ErrDenied{Reason: t.s.m.text("approval.rejected", nil)}
	default:
		return &tools.ErrDenied{Reason: t.s.m.text("approval.unknown_option", prompts.Run{"OPTION": opt})}
	}
	if !g.IsZero() {
		s.remember(g)
	}
	if opt == protocol.OptionRejectAlways {
		return &tools.ErrDenied{Reason: t.s.m.text("approval.rejected_always", nil)}
	}
	return nil
}

// remember stores a grant and answers the session's other pending requests it decides.
func (s *Session) remember(g grant) {
	if s.parent != nil {
		// "Allow for this session" on a subagent's card is the parent session's grant; the
		// child's own pending questions are asked one at a time, so none waits for it.
		s.parent.remember(g)
		return
	}
	if g.Scope == policy.ScopeProject {
		s.m.projects.addGrant(s.roots.Cwd(), g)
	} else {
		s.mu.Lock()
		s.grants = append(s.grants, g)
		s.mu.Unlock()
	}
	mode := policy.Mode(s.currentMode())
	grants := s.allGrants()
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.pending {
		var err error
		switch policy.Decide(mode, grants, p.call) {
		case policy.Allow:
		case policy.Deny:
			err = &tools.ErrDenied{Reason: s.m.text("approval.rejected_always", nil)}
		default:
			continue
		}
		select {
		case p.answer <- err:
			p.cancel()
		default:
		}
	}
}

// leavePlan refuses a mutating call in plan mode, offering the user (once per turn) to switch to
// ask or auto so the call can go ahead.
func (t *turn) leavePlan(ctx context.Context, c *call, req tools.PermissionRequest) error {
	s := t.s
	// A subagent never changes its parent's mode: it is refused as plan mode refuses.
	if t.switchAsked || s.parent != nil || s.m.d.Client == nil || !s.m.d.Client.CanAskPermission() {
		return &tools.ErrDenied{Reason: t.s.m.text("approval.plan_refusal", nil)}
	}
	t.switchAsked = true
	shape := t.toolCallShape(c, req)
	shape.Kind = protocol.KindSwitchMode
	shape.Title = "Leave plan mode to: " + shape.Title
	res, err := s.m.d.Client.RequestPermission(ctx, protocol.RequestPermissionParams{SessionID: s.id, ToolCall: shape, Options: switchOptions})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil || res.Outcome.Outcome != "selected" {
		return &tools.ErrDenied{Reason: t.s.m.text("approval.plan_refusal", nil)}
	}
	switch res.Outcome.OptionID {
	case protocol.OptionSwitchAuto:
		s.setMode(ModeAuto, true)
		return nil
	case protocol.OptionSwitchAsk:
		// Leaving plan mode for ask mode is the user's approval of this call.
		s.setMode(ModeAsk, true)
		return nil
	}
	return &tools.ErrDenied{Reason: t.s.m.text("approval.plan_refusal", nil)}
}

// shownStdin is how much of a program's input the content block quotes; rawInput.stdin carries
// all of it.
const shownStdin = 64 << 10

// envStdinText is the human-readable part of a program's question about its variables and input.
func envStdinText(env map[string]string, stdin string) string {
	var b strings.Builder
	if len(env) > 0 {
		b.WriteString("Environment variables set for the program:\n")
		for _, k := range slices.Sorted(maps.Keys(env)) {
			fmt.Fprintf(&b, "  %s=%s\n", quoteIfOdd(k), quoteIfOdd(env[k]))
		}
	}
	if stdin != "" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		if len(stdin) <= shownStdin {
			fmt.Fprintf(&b, "Input written to the program's stdin (%d bytes):\n%s", len(stdin), stdin)
		} else {
			fmt.Fprintf(&b, "Input written to the program's stdin (%d bytes; the first %d follow, rawInput.stdin has all of it):\n%s", len(stdin), shownStdin, stdin[:shownStdin])
		}
	}
	return b.String()
}

// quoteIfOdd quotes s (Go syntax) when it holds a space, a control or an invisible character, so
// a variable cannot hide in, or spoof, the lines around it.
func quoteIfOdd(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '"' }) {
		return strconv.Quote(s)
	}
	return s
}
