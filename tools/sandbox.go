package tools

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/agentd-dev/agentd/sandbox"
)

// Sandbox is how run_program confines programs: the sandbox setting and what the platform
// allows, filled by the engine. A nil *Sandbox in Env means the setting is off.
type Sandbox struct {
	// Mode is "auto" or "required" (sandbox.ModeAuto, sandbox.ModeRequired).
	Mode string
	// Status is what the platform supports (sandbox.Probe).
	Status sandbox.Status
	// Exe is the helper agentd starts programs through: its own executable.
	Exe string
	// Writable and Deny extend the roots and the built-in deny list (sandbox.DefaultDeny).
	Writable, Deny []string
	Network        bool
}

// The values of PermissionRequest.Sandbox: how a program will run relative to the sandbox.
const (
	// SandboxApplied: the program runs in the sandbox.
	SandboxApplied = "applied"
	// SandboxUnavailable: the sandbox is wanted but cannot be applied here; the program would
	// run with the user's rights, so it asks even in auto mode.
	SandboxUnavailable = "unavailable"
	// SandboxUnsupported: agentd has no sandbox for this platform (Windows); as unavailable.
	SandboxUnsupported = "unsupported"
	// SandboxEscape: the model asked to run outside the sandbox (sandbox: false); always asks.
	SandboxEscape = "escape"
	// SandboxOutside: a tool whose program never runs in the sandbox (add_dependency needs the
	// network and the package caches); it asks even in auto mode, saying why.
	SandboxOutside = "outside"
)

// SandboxMeta is the tool_call's _meta["agentd/sandbox"].
type SandboxMeta struct {
	Applied  bool     `json:"applied"`
	Writable []string `json:"writable"`
	Network  bool     `json:"network"`
}

// sandboxChoice is how one program runs.
type sandboxChoice struct {
	// state is "" (no sandbox setting), or one of the Sandbox* values.
	state         string
	justification string
	policy        sandbox.Policy
	exe           string
	// background: run_program {background: true} (tools/background.go).
	background bool
}

func (c sandboxChoice) meta() SandboxMeta {
	m := SandboxMeta{Applied: c.state == SandboxApplied, Writable: []string{}}
	if m.Applied {
		m.Writable = append(append(append(m.Writable, c.policy.Roots...), c.policy.Writable...), "$TMPDIR")
		m.Network = c.policy.Network
	} else {
		m.Network = true
	}
	return m
}

// chooseSandbox decides how run_program runs a program: in the sandbox when the setting wants it
// and the platform allows; outside it when the model asked (escape: a question in every mode)
// or the platform cannot (unavailable: a question even in auto mode); a result refuses when the
// setting requires the sandbox and it cannot be had.
func chooseSandbox(env *Env, want *bool, justification string) (sandboxChoice, *Result) {
	sb := env.Sandbox
	if sb == nil {
		return sandboxChoice{}, nil
	}
	if want != nil && !*want {
		if sb.Mode == sandbox.ModeRequired {
			r := Errorf("field sandbox: the user's settings require the sandbox (sandbox.mode \"required\"); programs cannot run outside it")
			return sandboxChoice{}, &r
		}
		if justification == "" {
			r := Errorf("field justification: say why the program must run outside the sandbox; the user is asked with it")
			return sandboxChoice{}, &r
		}
		return sandboxChoice{state: SandboxEscape, justification: justification}, nil
	}
	if !sb.Status.Available {
		if sb.Mode == sandbox.ModeRequired {
			r := Errorf("the sandbox is required by the user's settings but cannot be applied here: %s. The program was not run", sb.Status.Reason)
			return sandboxChoice{}, &r
		}
		if sb.Status.Unsupported {
			return sandboxChoice{state: SandboxUnsupported}, nil
		}
		return sandboxChoice{state: SandboxUnavailable}, nil
	}
	home, _ := os.UserHomeDir()
	deny := append(sandbox.DefaultDeny(home), sb.Deny...)
	return sandboxChoice{state: SandboxApplied, exe: sb.Exe, policy: sandbox.Policy{
		Roots: env.Roots.Dirs(), Writable: sb.Writable, Deny: deny, Network: sb.Network,
	}}, nil
}

// outsideSandbox is the choice of a tool whose program cannot run in the sandbox, for the reason
// why: with the sandbox setting on it asks even in auto mode, saying so; where the settings
// require the sandbox it does not run.
func outsideSandbox(env *Env, tool, why string) (sandboxChoice, *Result) {
	sb := env.Sandbox
	if sb == nil {
		return sandboxChoice{}, nil
	}
	if sb.Mode == sandbox.ModeRequired {
		r := Errorf("%s runs its program outside the sandbox (%s), and the user's settings require the sandbox (sandbox.mode \"required\"); it was not run. Ask the user to run it", tool, why)
		return sandboxChoice{}, &r
	}
	return sandboxChoice{state: SandboxOutside, justification: why}, nil
}

// wrap makes cmd start in the sandbox with a private temporary directory, which cleanup removes.
func (c sandboxChoice) wrap(cmd *exec.Cmd) (cleanup func(), err error) {
	if c.state != SandboxApplied {
		return func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "agentd-run-")
	if err != nil {
		return nil, fmt.Errorf("the sandbox's temporary directory: %w", err)
	}
	p := c.policy
	p.TempDir = tmp
	release, err := sandbox.Wrap(cmd, c.exe, p)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return func() { release(); os.RemoveAll(tmp) }, nil
}

// MetaSandbox is the _meta key of a program's sandbox (docs/protocol.md).
const MetaSandbox = "agentd/sandbox"

// describe puts the choice on the permission request: its state, the model's reason, and the
// _meta the card and the tool_call carry.
func (c sandboxChoice) describe(req *PermissionRequest) {
	if c.state == "" {
		return
	}
	req.Sandbox, req.Justification = c.state, c.justification
	if req.Meta == nil {
		req.Meta = map[string]any{}
	}
	req.Meta[MetaSandbox] = c.meta()
	switch c.state {
	case SandboxApplied:
		req.Title += " (sandboxed)"
	case SandboxEscape:
		req.Title += " outside the sandbox: " + c.justification
	case SandboxUnavailable, SandboxUnsupported:
		req.Title += " (no sandbox here)"
	case SandboxOutside:
		req.Title += " (not sandboxed: " + c.justification + ")"
	}
}

// report adds the sandbox to the result's rawOutput.
func (c sandboxChoice) report(r *Result) {
	if c.state == "" {
		return
	}
	if raw, ok := r.Raw.(map[string]any); ok {
		raw["sandbox"] = c.meta()
	}
}

// NewSandbox is the Env.Sandbox for the sandbox setting's values: nil when mode is off (or
// empty), else the setting with what the platform allows (sandbox.Probe) and the helper. A
// process whose main did not install the helper (sandbox.SetHelper: an in-process test, an
// embedder) gets nil too: only agentd's own binary can confine a program, and it always installs it.
func NewSandbox(mode string, writable, deny []string, network bool) *Sandbox {
	if mode != sandbox.ModeAuto && mode != sandbox.ModeRequired {
		return nil
	}
	exe, installed := sandbox.Helper()
	if !installed {
		return nil
	}
	sb := &Sandbox{Mode: mode, Status: sandbox.Probe(), Exe: exe, Writable: writable, Deny: deny, Network: network}
	if exe == "" {
		sb.Status.Available, sb.Status.Reason = false, "agentd could not find its own executable to start the sandbox helper"
	}
	return sb
}
