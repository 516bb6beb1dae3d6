package acceptance_test

// PROTOCOL.md "v1.2 additions → Trust, per session": run_program's env and stdin are part of the
// permission question and of the grant, and a grant never covers arguments it did not show.

import (
	"fmt"
	"maps"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
)

// An attacker's model gets "Allow for this session" for a harmless `git status`, then sends the
// same argv with variables that make git (or the loader, go, node) run a program of its choice,
// or the same `python3 -` with another script on stdin. Each must be asked about again, showing
// the variables and the input in rawInput and in the title; the plain call stays covered.
func TestRunProgramGrantCoversOnlyTheEnvStdinAndArgvItShowed(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"git", "python3"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
	type step struct {
		argv  []string
		env   map[string]string
		stdin string
		asks  bool
	}
	status := []string{"git", "status", "--short"}
	steps := []step{
		{argv: status, asks: true},
		{argv: status, env: map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "false"}, asks: true},
		{argv: status, env: map[string]string{"GOFLAGS": "-toolexec=/nonexistent/evil"}, asks: true},
		{argv: status, env: map[string]string{"LD_PRELOAD": "/nonexistent/evil.so"}, asks: true},
		{argv: status, env: map[string]string{"NODE_OPTIONS": "--require=/nonexistent/evil.js"}, asks: true},
		{argv: status}, // the plain grant still covers the plain call
		{argv: append(status, "--output=/nonexistent/outside"), asks: true},          // an argument it did not show
		{argv: status, env: map[string]string{"LD_PRELOAD": "/nonexistent/evil.so"}}, // granted with that env
		{argv: []string{"python3", "-"}, stdin: "print('A')\n", asks: true},
		{argv: []string{"python3", "-"}, stdin: "print('A')\n"},
		{argv: []string{"python3", "-"}, stdin: "print('B')\n", asks: true},
		{argv: []string{"python3", "-"}, asks: true},
	}
	var rs []map[string]any
	var answers []string
	for i, s := range steps {
		args := map[string]any{"command": s.argv}
		if s.env != nil {
			args["env"] = s.env
		}
		if s.stdin != "" {
			args["stdin"] = s.stdin
		}
		rs = append(rs, map[string]any{"toolCalls": []any{map[string]any{"id": fmt.Sprintf("c%d", i), "name": "run_program", "args": args}}})
		if s.asks {
			answers = append(answers, "allow_session")
		}
	}
	rs = append(rs, map[string]any{"text": "done"})
	e := start(t, fakeeditor.Full(), replay(t, responses(rs...)))
	e.ed.AnswerPermissions(answers...)
	sid := e.newSession()
	e.prompt(sid, "run them")
	perms := e.rawPermissions()
	var want []step
	for _, s := range steps {
		if s.asks {
			want = append(want, s)
		}
	}
	if len(perms) != len(want) {
		var titles []string
		for _, p := range perms {
			tc, _ := p["toolCall"].(map[string]any)
			titles = append(titles, fmt.Sprint(tc["title"]))
		}
		t.Fatalf("%d permission requests, want %d:\n%s", len(perms), len(want), strings.Join(titles, "\n"))
	}
	for i, s := range want {
		tc, _ := perms[i]["toolCall"].(map[string]any)
		raw, _ := tc["rawInput"].(map[string]any)
		title, _ := tc["title"].(string)
		gotEnv := map[string]string{}
		if m, ok := raw["env"].(map[string]any); ok {
			for k, v := range m {
				gotEnv[k] = fmt.Sprint(v)
			}
		} else if raw["env"] != nil {
			t.Errorf("request %d: rawInput.env is %T, want an object", i, raw["env"])
		}
		if !maps.Equal(gotEnv, s.env) && !(len(gotEnv) == 0 && len(s.env) == 0) {
			t.Errorf("request %d: rawInput.env = %v, want %v", i, gotEnv, s.env)
		}
		for k, v := range s.env {
			if !strings.Contains(title, k+"="+v) {
				t.Errorf("request %d: title %q does not show %s=%s", i, title, k, v)
			}
		}
		if got, _ := raw["stdin"].(string); got != s.stdin {
			t.Errorf("request %d: rawInput.stdin = %q, want %q", i, got, s.stdin)
		}
		if s.stdin != "" {
			if !strings.Contains(title, "stdin") {
				t.Errorf("request %d: title %q does not mention stdin", i, title)
			}
			var shown bool
			for _, c := range tc["content"].([]any) {
				cm, _ := c.(map[string]any)
				inner, _ := cm["content"].(map[string]any)
				text, _ := inner["text"].(string)
				shown = shown || strings.Contains(text, s.stdin)
			}
			if !shown {
				t.Errorf("request %d: the stdin is not in the request's content: %v", i, tc["content"])
			}
		}
	}
}
