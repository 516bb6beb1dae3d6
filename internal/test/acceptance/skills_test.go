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

// Through the binary: a project skill is listed (name and description) in the system prompt and
// the skill tool returns its body and its folder's files; a SKILL.md that is a link leading out
// of the project and one with bad front matter are left out, each with a notice naming the file
// (and the key), and the session goes on. The / menu offers the skill, and /NAME uses it.
func TestSkillsListedLoadedAndRefused(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_s", Name: "skill", Arguments: json.RawMessage(`{"name":"release-notes"}`)}}},
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_x", Name: "skill", Arguments: json.RawMessage(`{"name":"evil"}`)}}},
		{Text: "done"},
	}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	e.writeFile(".agents/skills/release-notes/SKILL.md", "---\nname: release-notes\ndescription: Write the release notes from the git log.\n---\n# Release notes\nRun scripts/log.sh and group the commits by package.\n")
	e.writeFile(".agents/skills/release-notes/scripts/log.sh", "git log --oneline\n")
	// A description with an escape sequence and a bidi override reaches the menu without them.
	e.writeFile(".agents/skills/hidden/SKILL.md", "---\nname: hidden\ndescription: \"Tidy \\e[8mquietly\\e[0m \\u202ethe code\"\n---\nbody\n")
	bad := e.writeFile(".claude/skills/broken/SKILL.md", "---\nname: broken\ndescripton: typo in the key\n---\nbody\n")
	outside := filepath.Join(t.TempDir(), "SKILL.md")
	if err := os.WriteFile(outside, []byte("---\nname: evil\ndescription: SECRET-OUTSIDE\n---\nSECRET-BODY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.root, ".agents/skills/evil/SKILL.md")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}

	sid := e.newSession()
	n := e.ed.WaitUpdate("skills notice", func(u protocol.SessionNotification) bool {
		return u.Update.SessionUpdate == protocol.UpdateNotice && u.Update.NoticeTitle == "Skills not loaded"
	})
	desc := n.Update.Description
	if !strings.Contains(desc, bad+`: key "descripton"`) || !strings.Contains(desc, link+": refused: it is a link that leads outside") {
		t.Fatalf("notice description:\n%s", desc)
	}
	cmds := e.ed.WaitUpdateKind(sid, protocol.UpdateAvailableCommandsUpdate)
	var names []string
	for _, c := range cmds.Update.AvailableCommands {
		names = append(names, c.Name+"="+c.Description)
	}
	if got := strings.Join(names, "|"); !strings.Contains(got, "|release-notes=Write the release notes from the git log. (skill)") || strings.Contains(got, "evil") || strings.Contains(got, "broken") {
		t.Fatalf("available commands: %s", got)
	}
	if got := strings.Join(names, "|"); !strings.Contains(got, "|hidden=Tidy quietly the code (skill)") || strings.ContainsAny(got, "\x1b\u202e") {
		t.Fatalf("available commands: %q, want the hidden skill's description without its escape and bidi override", got)
	}
	if res := e.prompt(sid, "/release-notes for v1.2"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	reqs := mainRequests(t, fm)
	if len(reqs) != 3 {
		t.Fatalf("%d chat requests", len(reqs))
	}
	if user := newestUser(t, reqs[0]); !strings.Contains(user, "Use the skill release-notes") || !strings.Contains(user, "for v1.2") || strings.Contains(user, "/release-notes") {
		t.Errorf("/release-notes was not expanded:\n%s", user)
	}
	system := contentText(t, reqs[0].Messages[0].Content)
	if !strings.Contains(system, "- release-notes: Write the release notes from the git log.") {
		t.Fatalf("the system prompt does not list the skill:\n%s", system)
	}
	if strings.Contains(system, "broken") || strings.Contains(system, "SECRET") || strings.Contains(system, "group the commits") {
		t.Fatalf("the system prompt holds a refused skill or a skill's body:\n%s", system)
	}
	got := toolResultText(t, fm, "call_s")
	for _, want := range []string{"group the commits by package", "scripts/log.sh", "SKILL.md"} {
		if !strings.Contains(got, want) {
			t.Errorf("skill result lacks %q:\n%s", want, got)
		}
	}
	if got := toolResultText(t, fm, "call_x"); strings.Contains(got, "SECRET") || !strings.Contains(got, `no skill named \"evil\"`) && !strings.Contains(got, `no skill named "evil"`) {
		t.Errorf("the refused skill's result: %s", got)
	}
}
