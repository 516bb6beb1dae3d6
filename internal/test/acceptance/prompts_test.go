package acceptance_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
)

// The project's AGENTS.md reaches the model through the real binary, inside the system prompt,
// and session/new reports it; the live context travels in the newest user message, not in the
// system prompt, so the system prompt is the same in every request of the session.
func TestAgentsMdReachesTheModel(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "one"}, {Text: "two"}}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	agents := e.writeFile("AGENTS.md", "Run `make check` before you say a change is done.")
	res, err := e.ed.NewSession(ctxT(t), e.root)
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(res.Meta["agentd/instructions"])
	if !strings.Contains(string(meta), agents) {
		t.Fatalf(`_meta["agentd/instructions"] = %s`, meta)
	}
	e.prompt(res.SessionID, "hello")
	e.prompt(res.SessionID, "again")
	reqs := mainRequests(t, fm)
	if len(reqs) != 2 {
		t.Fatalf("%d chat requests", len(reqs))
	}
	var systems []string
	for _, r := range reqs {
		if r.Messages[0].Role != "system" {
			t.Fatalf("first message %q", r.Messages[0].Role)
		}
		systems = append(systems, string(r.Messages[0].Content))
	}
	if !strings.Contains(systems[0], "make check") || !strings.Contains(systems[0], agents) {
		t.Fatalf("the system prompt lacks AGENTS.md:\n%s", systems[0])
	}
	if systems[0] != systems[1] || strings.Contains(systems[0], "Working directory") {
		t.Fatalf("the system prompt is not stable or holds live facts:\n%s\n---\n%s", systems[0], systems[1])
	}
	// The first request's newest message carries the live context; the second request sends
	// that message again byte for byte (the context did not change, so no new reminder).
	first := reqs[0].Messages[len(reqs[0].Messages)-1]
	if first.Role != "user" || !strings.Contains(string(first.Content), "Working directory: "+e.root) {
		t.Fatalf("the newest user message lacks the live context: %s", first.Content)
	}
	if again := reqs[1].Messages[len(reqs[0].Messages)-1]; string(again.Content) != string(first.Content) {
		t.Fatalf("the earlier message changed:\n%s\n%s", first.Content, again.Content)
	}
}
