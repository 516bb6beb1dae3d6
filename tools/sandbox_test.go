package tools

import (
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/sandbox"
)

// chooseSandbox: no setting, no sandbox; required refuses what would run outside it; an escape
// needs a justification; an unavailable sandbox in auto mode is named, never applied silently.
func TestChooseSandbox(t *testing.T) {
	env := &Env{Roots: nil}
	no, yes := false, true
	if c, r := chooseSandbox(env, &no, "x"); r != nil || c.state != "" {
		t.Errorf("without a setting: %+v %v", c, r)
	}
	up := sandbox.Status{Available: true}
	down := sandbox.Status{Reason: "no landlock"}
	cases := []struct {
		name   string
		sb     Sandbox
		want   *bool
		why    string
		state  string
		refuse string
	}{
		{"required refuses an escape", Sandbox{Mode: sandbox.ModeRequired, Status: up}, &no, "need it", "", "require the sandbox"},
		{"required refuses without a sandbox", Sandbox{Mode: sandbox.ModeRequired, Status: down}, nil, "", "", "no landlock"},
		{"an escape needs a justification", Sandbox{Mode: sandbox.ModeAuto, Status: up}, &no, "", "", "field justification"},
		{"an escape", Sandbox{Mode: sandbox.ModeAuto, Status: up}, &no, "need it", SandboxEscape, ""},
		{"unavailable in auto", Sandbox{Mode: sandbox.ModeAuto, Status: down}, &yes, "", SandboxUnavailable, ""},
	}
	for _, c := range cases {
		sb := c.sb
		env := &Env{Sandbox: &sb}
		got, r := chooseSandbox(env, c.want, c.why)
		if c.refuse != "" {
			if r == nil || !r.IsError || !strings.Contains(r.Output, c.refuse) {
				t.Errorf("%s: result %v, want a refusal naming %q", c.name, r, c.refuse)
			}
			continue
		}
		if r != nil || got.state != c.state {
			t.Errorf("%s: state %q (%v), want %q", c.name, got.state, r, c.state)
		}
		var req PermissionRequest
		got.describe(&req)
		if req.Sandbox != c.state || req.Meta[MetaSandbox] == nil {
			t.Errorf("%s: the request says %+v", c.name, req)
		}
		if c.state == SandboxEscape && !strings.Contains(req.Title, c.why) {
			t.Errorf("%s: the title %q lacks the justification", c.name, req.Title)
		}
	}
}
