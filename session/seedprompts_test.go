package session

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
)

// customTexts is the built-in prompt config with several texts of one file replaced, old → new.
func customTexts(t *testing.T, file string, pairs ...string) *prompts.Set {
	t.Helper()
	m := builtinMap(t)
	s := string(m[file].Data)
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("%s holds no %q", file, pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	m[file] = &fstest.MapFile{Data: []byte(s)}
	set, err := prompts.Load(m, Catalog(tools.Default()))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestApprovalPrompt is the seed's ApprovalPromptTest: what a refused call tells the model is
// the config's approval text, whichever way it was refused (the user's rejection, plan mode),
// exactly as the config says it.
func TestApprovalPrompt(t *testing.T) {
	set := customTexts(t, "messages.yml",
		`rejected: "The user rejected this call.`, `rejected: "Abgelehnt vom Nutzer.`,
		`plan_refusal: "Plan mode:`, `plan_refusal: "Planmodus:`)
	rejected := set.Render("approval.rejected", nil)
	if !strings.HasPrefix(rejected, "Abgelehnt vom Nutzer.") {
		t.Fatalf("rejected %q", rejected)
	}
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), textReplyOf("ok"))
	h.texts = set
	_ = h.m.Shutdown(context.Background())
	h.m = h.manager()
	h.client.answer = answerWith(protocol.OptionRejectOnce)
	h.newSession()
	h.prompt("edit")
	trs := toolResults(h.prov.requests()[1].Messages)
	if len(trs) != 1 || !trs[0].IsError || trs[0].Text != rejected {
		t.Fatalf("model saw %+v, want %q", trs, rejected)
	}

	h2 := newHarness(t, editReply("e1", "alpha", "ALPHA"), textReplyOf("ok"))
	h2.texts = set
	_ = h2.m.Shutdown(context.Background())
	h2.m = h2.manager()
	h2.client.answer = answerWith(protocol.OptionRejectOnce) // declines the switch out of plan mode
	h2.newSession()
	if _, err := h2.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h2.sid, ConfigID: "mode", Value: ModePlan}); err != nil {
		t.Fatal(err)
	}
	h2.prompt("edit")
	trs = toolResults(h2.prov.requests()[1].Messages)
	if len(trs) != 1 || !trs[0].IsError || !strings.HasPrefix(trs[0].Text, "Planmodus: this session may not change files") {
		t.Fatalf("model saw %+v", trs)
	}
	if got := h2.ws.file(h2.path("a.txt")); got != "alpha\n" {
		t.Fatalf("file changed in plan mode: %q", got)
	}
}

// TestToolResultsPrompt is the seed's ToolResultsPromptTest for what agentd itself writes into
// tool results: a call of a tool that does not exist and a tool that crashed read the config's
// call and loop texts, with the tool's name and the error inserted verbatim.
func TestToolResultsPrompt(t *testing.T) {
	set := customTexts(t, "messages.yml",
		`unknown_tool: "there is no tool named`, `unknown_tool: "Kein Werkzeug heißt`,
		`tool_crashed: "Error: the tool {{TOOL}} crashed`, `tool_crashed: "Fehler: {{TOOL}} stürzte ab`)
	h := newHarness(t,
		reply{events: callsReply(tc{"u1", "read_fiel", `{"path":"a.txt"}`}, tc{"p1", "explode", `{}`})},
		textReplyOf("ok"))
	h.texts = set
	_ = h.m.Shutdown(context.Background())
	h.m = h.manager()
	h.newSession()
	h.prompt("go")
	trs := toolResults(h.prov.requests()[1].Messages)
	if len(trs) != 2 {
		t.Fatalf("tool results %+v", trs)
	}
	if want := `Error: Kein Werkzeug heißt "read_fiel"; the available tools are: read_file, edit_file, explode, run_program`; trs[0].Text != want || !trs[0].IsError {
		t.Errorf("unknown tool: %q, want prefix %q", trs[0].Text, want)
	}
	if !strings.HasPrefix(trs[1].Text, "Fehler: explode stürzte ab (boom)") || !trs[1].IsError {
		t.Errorf("crashed tool: %q", trs[1].Text)
	}
}

func textReplyOf(s string) reply { return reply{events: textReply(s)} }
