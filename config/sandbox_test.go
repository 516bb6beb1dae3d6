package config

import (
	"slices"
	"strings"
	"testing"
)

// TestProjectOnlyTightensTheSandbox: a cloned repository's .agentd/config.json may make the
// sandbox required, keep the network off and deny more, but never turn the sandbox off, open
// the network or widen what programs may write.
func TestProjectOnlyTightensTheSandbox(t *testing.T) {
	loosen := []string{
		`{"sandbox": {"mode": "off"}}`,
		`{"sandbox": {"network": true}}`,
		`{"sandbox": {"writable": ["/home"]}}`,
		`{"sandbox": {"deny": []}}`,
	}
	for _, body := range loosen {
		s, _, err := projectStore(t, `{"sandbox": {"deny": ["/srv/secrets"]}}`, body)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		got := s.Get().Sandbox
		if got.Mode != SandboxAuto || got.Network || len(got.Writable) != 0 || !slices.Equal(got.Deny, []string{"/srv/secrets"}) {
			t.Errorf("%s loosened the sandbox: %+v", body, got)
		}
		if !strings.Contains(s.Get().ProjectNotice, "sandbox.") {
			t.Errorf("%s: no notice names the ignored key: %q", body, s.Get().ProjectNotice)
		}
	}
	s, _, err := projectStore(t, `{"sandbox": {"deny": ["/srv/secrets"]}}`, `{"sandbox": {"mode": "required", "network": false, "deny": ["/srv/secrets", "/srv/more"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Get().Sandbox; got.Mode != SandboxRequired || !slices.Equal(got.Deny, []string{"/srv/secrets", "/srv/more"}) {
		t.Errorf("the project could not tighten: %+v", got)
	}
	user := NewStore()
	if err := user.Set(LayerUser, []byte(`{"sandbox": {"mode": "off", "network": true, "writable": ["/var/cache/build"]}}`)); err != nil {
		t.Fatal(err)
	}
	if got := user.Get().Sandbox; got.Mode != SandboxOff || !got.Network || got.Writable[0] != "/var/cache/build" {
		t.Errorf("the user's layer did not take: %+v", got)
	}
	for _, bad := range []string{`{"sandbox": {"mode": "sometimes"}}`, `{"sandbox": {"writable": ["rel/dir"]}}`, `{"sandbox": {"deny": ["rel"]}}`} {
		if err := NewStore().Set(LayerUser, []byte(bad)); err == nil || !strings.Contains(err.Error(), "sandbox.") {
			t.Errorf("%s: err = %v, want one naming the key", bad, err)
		}
	}
}
