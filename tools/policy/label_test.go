package policy

import "testing"

func TestGrantLabelSaysWhatItCoversAndWhere(t *testing.T) {
	for _, c := range []struct {
		g    Grant
		want string
	}{
		{Grant{Tool: "run_program", Command: []string{"git", "status"}, Allow: true, Scope: ScopeProject}, "Always allow `git status` in this project"},
		{Grant{Tool: "run_program", Command: []string{"sh", "-c", "echo 'hi'"}, Allow: true, Scope: ScopeSession}, "Allow `sh -c 'echo '\\''hi'\\'''` for this session"},
		{Grant{Tool: "run_program", Command: []string{"make"}, Env: map[string]string{"CC": "clang"}, Allow: true, Scope: ScopeSession}, "Allow `make` with the variables and input it showed for this session"},
		{Grant{Tool: "run_program", Command: []string{"rm"}, Scope: ScopeProject}, "Always reject `rm` in this project"},
		{Grant{Tool: "web_fetch", Host: "pkg.go.dev", Allow: true, Scope: ScopeProject}, "Always allow web_fetch of pkg.go.dev in this project"},
		{Grant{Tool: "edit_file", Pattern: "/p/secrets/**", Scope: ScopeProject}, "Always reject changes to /p/secrets/** in this project"},
		{Grant{Tool: "edit_file", Allow: true, Scope: ScopeSession}, "Allow edit_file for this session"},
		{Grant{Tool: "run_program", Sandboxed: true, Allow: true, Scope: ScopeSession}, "Allow sandboxed programs for this session"},
		{Grant{Tool: "*", Allow: true, Scope: ScopeSession}, "Allow every tool for this session"},
	} {
		if got := c.g.Label(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.g, got, c.want)
		}
	}
}
