package session

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/tools/policy"
)

// sandboxEnv is the Env.Sandbox of the turn's settings. Where the sandbox is wanted but cannot
// be applied, the session says so once, in plain words: programs then ask, even in auto mode.
func (t *turn) sandboxEnv() *tools.Sandbox {
	sb := t.set.Sandbox
	// agentd's own config (with the key store's file) and state (sessions, grants, the
	// project's mode) are never a program's to read or write.
	deny := append(slices.Clone(sb.Deny), config.ConfigDir(), config.StateDir())
	if d := t.s.m.d.StateDir; d != "" {
		deny = append(deny, d)
	}
	box := tools.NewSandbox(sb.Mode, sb.Writable, deny, sb.Network)
	if box != nil && !box.Status.Available && t.s.sandboxNoticed.CompareAndSwap(false, true) {
		what := "Programs will ask before they run, even in auto mode."
		if box.Mode == "required" {
			what = "The settings require the sandbox (sandbox.mode \"required\"), so programs will not run."
		}
		t.s.notice(protocol.SeverityWarning, "Programs cannot be sandboxed here", box.Status.Reason+". "+what)
	}
	return box
}

// sandboxOptions adjusts a program's permission options to its sandbox: a sandboxed program
// may be allowed for the session with every other sandboxed one; a program the model asked to
// run outside the sandbox can only be allowed once (no grant answers such a call later).
func sandboxOptions(req tools.PermissionRequest, opts []protocol.PermissionOption) []protocol.PermissionOption {
	switch req.Sandbox {
	case tools.SandboxApplied:
		return append(opts[:1:1], append([]protocol.PermissionOption{{OptionID: policy.OptionAllowSandboxed, Name: "Allow sandboxed programs for this session", Kind: "allow_always", Meta: protocol.Meta{"agentd/scope": "session"}}}, opts[1:]...)...)
	case tools.SandboxEscape:
		var out []protocol.PermissionOption
		for _, o := range opts {
			if o.OptionID != protocol.OptionAllowSession && o.OptionID != protocol.OptionAllowAlways {
				out = append(out, o)
			}
		}
		return out
	}
	return opts
}

// backgroundPrograms is the session's table of background programs, made at its first use.
func (s *Session) backgroundPrograms() *tools.Programs {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.programs == nil {
		s.programs = tools.NewPrograms()
	}
	return s.programs
}

// MetaProgram is the _meta key of a background program's end, on a tool_call_update of the call
// that started it (docs/protocol.md).
const MetaProgram = "agentd/program"

// programEnded tells the client that a background program ended, on the call that started it.
func (s *Session) programEnded(info tools.ProgramInfo) {
	if info.ToolCallID == "" {
		return
	}
	s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: info.ToolCallID, Meta: protocol.Meta{MetaProgram: wireProgram(info)}})
}

func wireProgram(info tools.ProgramInfo) protocol.Program {
	p := protocol.Program{ProgramID: info.ID, Command: info.Argv, Cwd: info.Dir, State: info.State, Sandboxed: info.Sandboxed, ToolCallID: info.ToolCallID}
	if p.Command == nil {
		p.Command = []string{}
	}
	if info.State != "running" {
		code := info.Exit
		p.ExitCode = &code
	}
	return p
}

// Programs answers agent/x/programs/list: the session's background programs.
func (m *Manager) Programs(ctx context.Context, p protocol.SessionIDParams) (protocol.ProgramsListResult, error) {
	if err := checkRequired("sessionId", p.SessionID); err != nil {
		return protocol.ProgramsListResult{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return protocol.ProgramsListResult{}, err
	}
	res := protocol.ProgramsListResult{Programs: []protocol.Program{}}
	for _, info := range s.backgroundPrograms().List() {
		res.Programs = append(res.Programs, wireProgram(info))
	}
	return res, nil
}

// StopProgram answers agent/x/programs/stop: the user ends a background program (and everything
// it started). It asks nothing: stopping changes nothing in the project. A program that had
// already ended is answered with its state.
func (m *Manager) StopProgram(ctx context.Context, p protocol.ProgramStopParams) (protocol.Program, error) {
	if err := Validate(&p); err != nil {
		return protocol.Program{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return protocol.Program{}, err
	}
	info, ok := s.backgroundPrograms().Stop(p.ProgramID)
	if !ok {
		return protocol.Program{}, &ParamError{Field: "programId", Message: fmt.Sprintf("no background program %q in this session", p.ProgramID)}
	}
	return wireProgram(info), nil
}
