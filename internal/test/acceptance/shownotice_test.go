package acceptance_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// What a user must know reaches an LSP client that does not render agentd's notice updates: a
// client whose initializationOptions do not say clientCapabilities.notices gets each notice as
// window/showMessage too (a warning for project settings left out, an error for a failed model
// request); a client that says it renders them gets no second copy.
func TestNoticeReachesAClientThatDoesNotRenderIt(t *testing.T) {
	t.Parallel()
	for _, renders := range []bool{false, true} {
		root := realDir(t)
		if err := os.MkdirAll(filepath.Join(root, ".agentd"), 0o755); err != nil {
			t.Fatal(err)
		}
		cfg, _ := json.Marshal(map[string]any{"hooks": map[string]any{"sessionStart": []any{map[string]any{"command": []string{"true"}}}}})
		if err := os.WriteFile(filepath.Join(root, ".agentd", "config.json"), cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		_, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Status: 401, Text: "bad key"}}, Routes: titleRoute})
		opts := fakeeditor.Minimal()
		opts.Agent.Notices = renders
		e := startIn(t, opts, openaiSettings(url, nil), "", root)
		sid := e.newSession()
		e.ed.WaitUpdate("project notice", func(u protocol.SessionNotification) bool {
			return u.Update.SessionUpdate == protocol.UpdateNotice && u.Update.NoticeTitle == "Project settings ignored"
		})
		e.prompt(sid, "hi")
		e.newSession() // a round trip after the turn's notices: a showMessage would be in by now
		shown := e.ed.Shown()
		if renders {
			if len(shown) != 0 {
				t.Errorf("a client that renders notices got them as window/showMessage too: %+v", shown)
			}
			continue
		}
		var project, failed bool
		for _, m := range shown {
			project = project || (m.Type == 2 && strings.Contains(m.Message, "Project settings ignored") && strings.Contains(m.Message, "hooks"))
			failed = failed || (m.Type == 1 && strings.Contains(m.Message, "The model request failed"))
		}
		if !project || !failed {
			t.Errorf("window/showMessage = %+v: want the project settings warning (%v) and the failed request's error (%v)", shown, project, failed)
		}
	}
}
