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
		{"no sandbox for the platform in auto", Sandbox{Mode: sandbox.ModeAuto, Status: sandbox.Status{Unsupported: true, Reason: "agentd has no sandbox for windows"}}, nil, "", SandboxUnsupported, ""},
		{"required refuses on a platform without a sandbox", Sandbox{Mode: sandbox.ModeRequired, Status: sandbox.Status{Unsupported: true, Reason: "agentd has no sandbox for windows"}}, nil, "", "", "no sandbox for windows"},
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

// The package managers' tools never slip past the sandbox: with the sandbox on, a download (go
// get, go mod tidy, npm install and uninstall) asks as a program outside the sandbox, saying
// why, and a manifest edit runs sandboxed; where the sandbox is required the downloads do not run.
func TestDependencyToolsDoNotBypassTheSandbox(t *testing.T) {
	h := newHarness(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "web/package.json": `{"name":"web"}`})
	h.deny = true
	up := sandbox.Status{Available: true}
	cases := []struct {
		tool  string
		args  map[string]any
		state string
	}{
		{"add_dependency", map[string]any{"ecosystem": "go", "package": "github.com/a/b"}, SandboxOutside},
		{"add_dependency", map[string]any{"ecosystem": "npm", "package": "lodash", "path": "web"}, SandboxOutside},
		{"edit_module_config", map[string]any{"ecosystem": "go", "action": "tidy"}, SandboxOutside},
		{"edit_module_config", map[string]any{"ecosystem": "npm", "action": "remove", "module": "lodash", "path": "web"}, SandboxOutside},
		{"edit_module_config", map[string]any{"ecosystem": "go", "action": "require", "module": "example.com/x", "version": "v0.1.0"}, SandboxApplied},
		{"edit_module_config", map[string]any{"ecosystem": "npm", "action": "set", "key": "scripts.test", "value": "x", "path": "web"}, SandboxApplied},
	}
	h.env.Sandbox = &Sandbox{Mode: sandbox.ModeAuto, Status: up}
	for i, c := range cases {
		mustErr(t, h.run(c.tool, c.args), "permission denied")
		req := h.asked[i]
		if req.Sandbox != c.state {
			t.Errorf("%s %v: sandbox %q, want %q", c.tool, c.args, req.Sandbox, c.state)
		}
		m, _ := req.Meta[MetaSandbox].(SandboxMeta)
		if m.Applied != (c.state == SandboxApplied) {
			t.Errorf("%s %v: _meta says applied %v", c.tool, c.args, m.Applied)
		}
		if c.state == SandboxOutside && (!strings.Contains(req.Title, "not sandboxed: it downloads") || req.Justification == "") {
			t.Errorf("%s %v: the question %q does not say it runs outside the sandbox and why", c.tool, c.args, req.Title)
		}
	}
	h.asked = nil
	h.env.Sandbox = &Sandbox{Mode: sandbox.ModeRequired, Status: up}
	for _, c := range cases[:4] {
		mustErr(t, h.run(c.tool, c.args), "require the sandbox")
	}
	if len(h.asked) != 0 {
		t.Errorf("a download asked although the sandbox is required: %+v", h.asked)
	}
}
