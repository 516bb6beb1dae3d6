package config

import (
	"strings"
	"testing"
)

// saveBeforeRun is "agentEdits" by default, "all" or false when the user says so (true reads as
// the default), and a project may ask for the default only: false would run programs on stale
// files, "all" would save the user's own changes.
func TestSaveBeforeRunValues(t *testing.T) {
	if got := Defaults().SaveBeforeRun; got != SaveAgentEdits {
		t.Fatalf("default = %q", got)
	}
	for raw, want := range map[string]SaveBeforeRun{`true`: SaveAgentEdits, `false`: SaveNone, `"all"`: SaveAll, `"agentEdits"`: SaveAgentEdits} {
		s := NewStore()
		if err := s.Set(LayerUser, []byte(`{"saveBeforeRun": `+raw+`}`)); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := s.Get().SaveBeforeRun; got != want {
			t.Errorf("saveBeforeRun %s = %q, want %q", raw, got, want)
		}
	}
	for _, raw := range []string{`"always"`, `1`} {
		err := NewStore().Set(LayerUser, []byte(`{"saveBeforeRun": `+raw+`}`))
		if err == nil || !strings.Contains(err.Error(), "saveBeforeRun") {
			t.Errorf("saveBeforeRun %s: error %v, want one naming the key", raw, err)
		}
	}
	for _, raw := range []string{`false`, `"all"`} {
		s, _, err := projectStore(t, "", `{"saveBeforeRun": `+raw+`}`)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Get(); got.SaveBeforeRun != SaveAgentEdits || !strings.Contains(got.ProjectNotice, "saveBeforeRun") {
			t.Errorf("project saveBeforeRun %s: got %q, notice %q", raw, got.SaveBeforeRun, got.ProjectNotice)
		}
	}
}
