package policy

import (
	"testing"

	"github.com/agentd-dev/agentd/tools"
)

func TestSandboxDecisions(t *testing.T) {
	run := func(state string, argv ...string) Call {
		return Call{Tool: "run_program", Effect: tools.EffectExec, Command: argv, Sandbox: state}
	}
	goTest := []Grant{{Tool: "run_program", Command: []string{"go", "test"}, Allow: true, Scope: ScopeProject}}
	everything := []Grant{{Tool: "*", Allow: true, Scope: ScopeSession}}
	sandboxed := []Grant{GrantFor(run(tools.SandboxApplied, "make"), OptionAllowSandboxed, ScopeSession)}
	reject := []Grant{{Tool: "run_program", Command: []string{"rm"}, Allow: false, Scope: ScopeProject}}
	cases := []struct {
		name   string
		mode   Mode
		grants []Grant
		call   Call
		want   Decision
	}{
		{"auto runs a sandboxed program", ModeAuto, nil, run(tools.SandboxApplied, "make"), Allow},
		{"auto asks to escape", ModeAuto, nil, run(tools.SandboxEscape, "make"), Ask},
		{"a command grant does not answer an escape", ModeAsk, goTest, run(tools.SandboxEscape, "go", "test"), Ask},
		{"a grant of everything does not answer an escape", ModeAuto, everything, run(tools.SandboxEscape, "go", "test"), Ask},
		{"a reject still refuses an escape", ModeAuto, reject, run(tools.SandboxEscape, "rm", "-rf"), Deny},
		{"plan refuses an escape", ModePlan, nil, run(tools.SandboxEscape, "make"), PlanRefuse},
		{"auto asks where there is no sandbox", ModeAuto, nil, run(tools.SandboxUnavailable, "make"), Ask},
		{"a command grant answers where there is no sandbox", ModeAuto, goTest, run(tools.SandboxUnavailable, "go", "test"), Allow},
		{"ask asks for a sandboxed program", ModeAsk, nil, run(tools.SandboxApplied, "make"), Ask},
		{"the sandboxed grant answers a sandboxed program", ModeAsk, sandboxed, run(tools.SandboxApplied, "curl", "x"), Allow},
		{"the sandboxed grant does not answer an escape", ModeAsk, sandboxed, run(tools.SandboxEscape, "make"), Ask},
		{"the sandboxed grant does not answer an unsandboxed program", ModeAsk, sandboxed, run(tools.SandboxUnavailable, "make"), Ask},
		{"the sandboxed grant does not answer another exec tool", ModeAsk, sandboxed, Call{Tool: "add_dependency", Effect: tools.EffectExec, Command: []string{"go", "get"}}, Ask},
		{"auto asks on a platform without a sandbox (Windows)", ModeAuto, nil, run(tools.SandboxUnsupported, "make"), Ask},
		{"ask asks on a platform without a sandbox", ModeAsk, nil, run(tools.SandboxUnsupported, "make"), Ask},
		{"a command grant answers on a platform without a sandbox", ModeAuto, goTest, run(tools.SandboxUnsupported, "go", "test"), Allow},
		{"the sandboxed grant does not answer on a platform without a sandbox", ModeAuto, sandboxed, run(tools.SandboxUnsupported, "make"), Ask},
		{"plan refuses on a platform without a sandbox", ModePlan, nil, run(tools.SandboxUnsupported, "make"), PlanRefuse},
		{"auto asks for a download outside the sandbox", ModeAuto, nil, Call{Tool: "add_dependency", Effect: tools.EffectExec, Command: []string{"npm", "install", "x"}, Sandbox: tools.SandboxOutside}, Ask},
		{"the sandboxed grant does not answer a download outside the sandbox", ModeAuto, []Grant{GrantFor(Call{Tool: "add_dependency", Effect: tools.EffectExec, Sandbox: tools.SandboxApplied}, OptionAllowSandboxed, ScopeSession)}, Call{Tool: "add_dependency", Effect: tools.EffectExec, Command: []string{"npm", "install", "x"}, Sandbox: tools.SandboxOutside}, Ask},
		{"no sandbox setting is today's auto", ModeAuto, nil, run("", "make"), Allow},
	}
	for _, c := range cases {
		if got := Decide(c.mode, c.grants, c.call); got != c.want {
			t.Errorf("%s: Decide = %v, want %v", c.name, got, c.want)
		}
	}
	if g := sandboxed[0]; !g.Sandboxed || !g.Allow || g.Scope != ScopeSession || g.Command != nil {
		t.Errorf("the sandboxed grant = %+v", g)
	}
}
