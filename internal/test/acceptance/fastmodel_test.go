package acceptance_test

import (
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// Settings models.fast: the session's title is asked of the fast model, and when the fast
// model's server is down, of the turn's model instead, and so is /compact's summary; the turn
// itself uses the main model.
func TestFastModelMakesTheTitle(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		fastURL func(url string) string
		title   string
	}{
		"fast":     {func(url string) string { return url }, "Fast title"},
		"fallback": {func(string) string { return "http://127.0.0.1:9/v1" }, "A title"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			routes := append([]fakemodel.Route{{Match: `"model":"fast-model"`, Turn: fakemodel.Turn{Text: "Fast title"}}}, titleRoute...)
			fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "hi"}, {Text: "main summary"}}, Routes: routes})
			settings := openaiSettings(url, map[string]any{
				"providers": map[string]any{
					"fm":    map[string]any{"apiType": "openai", "baseUrl": url, "model": fakemodel.ModelID},
					"small": map[string]any{"apiType": "openai", "baseUrl": c.fastURL(url), "model": "fast-model"},
				},
				"models": map[string]any{"fast": map[string]any{"provider": "small"}},
			})
			e := start(t, fakeeditor.Full(), settings)
			sid := e.newSession()
			if res := e.prompt(sid, "hello"); res.StopReason != "end_turn" {
				t.Fatalf("stop %q", res.StopReason)
			}
			u := e.ed.WaitUpdate("title", func(u protocol.SessionNotification) bool {
				return u.SessionID == sid && u.Update.SessionUpdate == protocol.UpdateSessionInfoUpdate && u.Update.SessionTitle != ""
			})
			if u.Update.SessionTitle != c.title {
				t.Errorf("title %q, want %q", u.Update.SessionTitle, c.title)
			}
			var fast int
			for _, b := range fm.Requests() {
				body := string(b)
				if strings.Contains(body, `"model":"fast-model"`) {
					fast++
					if strings.Contains(body, `"tools":[`) {
						t.Error("the turn's own request went to the fast model")
					}
				}
			}
			if len(mainRequests(t, fm)) != 1 {
				t.Errorf("%d turn requests", len(mainRequests(t, fm)))
			}
			if want := map[string]int{"fast": 1, "fallback": 0}[name]; fast != want {
				t.Errorf("%d requests to the fast model, want %d", fast, want)
			}
			// /compact's summary comes from the fast model too, else from the turn's.
			if res := e.prompt(sid, "/compact"); res.StopReason != "end_turn" {
				t.Fatalf("/compact stop %q", res.StopReason)
			}
			cu := kinds(e.rawUpdates(sid), "compaction_update")
			if len(cu) == 0 {
				t.Fatal("no compaction_update")
			}
			want := map[string]string{"fast": "Fast title", "fallback": "main summary"}[name]
			if last := cu[len(cu)-1]; last["status"] != "completed" || last["summary"] != want {
				t.Errorf("last compaction_update %v, want the summary %q", last, want)
			}
		})
	}
}
