package acceptance_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// contentText is a chat message's content as text: a string, or the text parts of a list.
func contentText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		t.Fatalf("content %s: %v", raw, err)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// newestUser is the text of a request's newest user message.
func newestUser(t *testing.T, r chatRequest) string {
	t.Helper()
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return contentText(t, r.Messages[i].Content)
		}
	}
	t.Fatal("no user message")
	return ""
}

// Through the binary: the project's AGENTS.md, what the user looks at in the editor (the active
// file, the selection, the open files, one outside the workspace), the project's modules and a
// project command typed by the user all reach the model; the editor's state and the modules sit
// in the newest user message, and the system prompt holds none of them.
func TestEditorContextAndCommandReachTheModel(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "reviewed"}}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	e.writeFile("AGENTS.md", "Always run `go vet` before answering.")
	e.writeFile("go.mod", "module example.com/acceptance\n\ngo 1.26\n")
	e.writeFile("web/package.json", `{"name": "acceptance-web"}`)
	e.writeFile(".agentd/commands/review.md", "---\ndescription: Review a file\nargument-hint: FILE\nmode: auto\n---\nReview $ARGUMENTS for bugs and list them; change nothing.\n")
	main := e.writeFile("main.go", "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	other := e.writeFile("util.go", "package main\n")
	e.ed.SetEditorState(protocol.EditorStateResult{
		ActiveFile: main,
		Selection:  &protocol.EditorSelection{Path: main, StartLine: 3, EndLine: 5, Text: "func main() {\n\tprintln(\"hi\")\n}"},
		OpenFiles:  []string{main, other, "/etc/hosts"},
	})
	sid := e.newSession()
	cmds := e.ed.WaitUpdateKind(sid, protocol.UpdateAvailableCommandsUpdate)
	var names []string
	for _, c := range cmds.Update.AvailableCommands {
		names = append(names, c.Name+"="+c.Description)
	}
	if got := strings.Join(names, "|"); !strings.HasPrefix(got, "compact=") || !strings.Contains(got, "|init=") || !strings.Contains(got, "|undo=") || !strings.Contains(got, "|review=Review a file (project)") {
		t.Fatalf("available commands: %s", got)
	}

	if res := e.prompt(sid, "/review main.go"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	reqs := mainRequests(t, fm)
	if len(reqs) != 1 {
		t.Fatalf("%d chat requests", len(reqs))
	}
	system := contentText(t, reqs[0].Messages[0].Content)
	user := newestUser(t, reqs[0])
	for _, want := range []string{
		"Review main.go for bugs and list them; change nothing.",
		"Active file in the editor: " + main + "\n",
		"Selected in the editor: " + main + " lines 3-5\n<selection>\nfunc main() {\n\tprintln(\"hi\")\n}\n</selection>",
		"Other open files: " + other + "\n",
		"/etc/hosts",
		"- " + filepath.Join(e.root, "go.mod") + " (go example.com/acceptance)",
		"- " + filepath.Join(e.root, "web", "package.json") + " (npm acceptance-web)",
		"Current time: ",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("the newest user message lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(user, "/review") || strings.Contains(user, "mode: auto") {
		t.Errorf("the command was not expanded, or its front matter was sent:\n%s", user)
	}
	if !strings.Contains(system, "Always run `go vet` before answering.") {
		t.Errorf("the system prompt lacks AGENTS.md:\n%s", system)
	}
	if strings.Contains(system, main) || strings.Contains(system, "example.com/acceptance") || strings.Contains(system, "Review main.go") {
		t.Errorf("the system prompt holds live or command data:\n%s", system)
	}
	reqsSent := e.ed.WaitRequest(protocol.MethodEditorState, 1)
	var p protocol.EditorStateParams
	if err := json.Unmarshal(reqsSent[0].Params, &p); err != nil || p.SessionID != sid {
		t.Errorf("editor_state params %s", reqsSent[0].Params)
	}
	if len(reqsSent) != 1 {
		t.Errorf("editor_state asked %d times for one turn", len(reqsSent))
	}
}

// A client that answers editor_state with garbage, or never answers it, costs only the editor
// part of the context: the turn runs and the model gets the rest.
func TestEditorStateBrokenClient(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]func(*fakeeditor.Options) func(*fakeeditor.Editor){
		"garbage": func(*fakeeditor.Options) func(*fakeeditor.Editor) {
			return func(ed *fakeeditor.Editor) {
				ed.SetEditorStateRaw(json.RawMessage(`{"activeFile": ["/x"], "selection": 7, "openFiles": {"a": 1}}`))
			}
		},
		"hung": func(o *fakeeditor.Options) func(*fakeeditor.Editor) {
			o.Unanswered = []string{protocol.MethodEditorState}
			return func(*fakeeditor.Editor) {}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "fine"}}, Routes: titleRoute})
			opts := fakeeditor.Full()
			after := setup(&opts)
			e := start(t, opts, openaiSettings(url, nil))
			after(e.ed)
			sid := e.newSession()
			if res := e.prompt(sid, "hello"); res.StopReason != "end_turn" {
				t.Fatalf("stop %q", res.StopReason)
			}
			reqs := mainRequests(t, fm)
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			user := newestUser(t, reqs[0])
			if !strings.Contains(user, "Working directory: "+e.root) || strings.Contains(user, "Active file") || strings.Contains(user, "Selected") {
				t.Errorf("context:\n%s", user)
			}
		})
	}
}
