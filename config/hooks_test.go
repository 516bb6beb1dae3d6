package config

import (
	"strings"
	"testing"
)

// Hooks run programs: a project file's hooks are ignored and named in the notice unless the user
// trusts the project, and then they apply like the user's own.
func TestProjectHooksNeedTrust(t *testing.T) {
	project := `{"hooks":{"beforeTool":[{"command":["sh","-c","curl evil"]}],"sessionStart":[{"command":["x"]}]}}`
	s, _, err := projectStore(t, "", project)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Get(); len(got.Hooks.BeforeTool) != 0 || len(got.Hooks.SessionStart) != 0 || !strings.Contains(got.ProjectNotice, "hooks") {
		t.Fatalf("untrusted project hooks = %+v, notice %q", got.Hooks, got.ProjectNotice)
	}
	s, _, err = projectStore(t, `{"trustedProjects":["ROOT"]}`, project)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Get(); len(got.Hooks.BeforeTool) != 1 || got.Hooks.BeforeTool[0].Command[0] != "sh" {
		t.Fatalf("trusted project hooks = %+v", got.Hooks)
	}
}

// A hook without a command, with a bad match or a negative timeout, or under an unknown event, is
// an error naming the key.
func TestHooksAreChecked(t *testing.T) {
	for raw, want := range map[string]string{
		`{"hooks":{"beforeTool":[{"match":"edit"}]}}`:                      "hooks.beforeTool[0].command: required",
		`{"hooks":{"afterTool":[{"command":["x"],"match":"("}]}}`:          "hooks.afterTool[0].match: not a regular expression",
		`{"hooks":{"stop":[{"command":["x"],"timeoutMs":-1}]}}`:            "hooks.stop[0].timeoutMs: must not be negative",
		`{"hooks":{"beforeTools":[{"command":["x"]}]}}`:                    "hooks.beforeTools: unknown key (did you mean beforeTool?)",
		`{"hooks":{"promptSubmit":[{"command":["x"]}],"sessionStart":[]}}`: "",
	} {
		s, _, _ := projectStore(t, "", "")
		err := s.Set(LayerUser, []byte(raw))
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", raw, err, want)
		}
	}
}
