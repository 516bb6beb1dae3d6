package policy

import "github.com/agentd-dev/agentd/tools"

// OptionAllowSandboxed is the ask-mode answer "Allow sandboxed programs for this session": a
// session grant covering every call of the tool that runs in the sandbox.
const OptionAllowSandboxed = "allow_sandboxed_session"

// sandboxMode is what the sandbox changes in the decision. A program the model asked to run
// outside the sandbox is always a question: no mode and no allow grant answer it (a reject still
// refuses). A program that cannot be sandboxed here (the machine cannot apply it, or agentd has
// no sandbox for the platform) although the settings want it, or that a tool runs outside the
// sandbox by design (add_dependency), asks even in auto mode (grants answer it as in ask mode): never a silent fallback to the user's full rights.
func sandboxMode(mode Mode, call Call) (Mode, bool) {
	if call.Effect != tools.EffectExec {
		return mode, false
	}
	switch call.Sandbox {
	case tools.SandboxEscape:
		return ModeAsk, true
	case tools.SandboxUnavailable, tools.SandboxUnsupported, tools.SandboxOutside:
		if mode == ModeAuto {
			return ModeAsk, false
		}
	}
	return mode, false
}

// sandboxMatches is false when g covers only sandboxed programs and call is not one.
func sandboxMatches(g Grant, call Call) bool {
	return !g.Sandboxed || (call.Effect == tools.EffectExec && call.Sandbox == tools.SandboxApplied)
}
