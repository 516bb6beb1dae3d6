package session

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
)

func editReply(id, old, new string) reply {
	return reply{events: callsReply(tc{id, "edit_file", `{"path":"a.txt","old":"` + old + `","new":"` + new + `"}`})}
}

func TestAskAllowOnceSendsDiffAndOptions(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("done")})
	h.client.answer = answerWith(protocol.OptionAllowOnce)
	h.newSession()
	h.prompt("edit")
	perms := h.client.permissions()
	if len(perms) != 1 {
		t.Fatalf("permission requests = %d", len(perms))
	}
	p := perms[0]
	var ids, kinds []string
	for _, o := range p.Options {
		ids = append(ids, o.OptionID)
		kinds = append(kinds, o.Kind)
	}
	if strings.Join(ids, ",") != "allow_once,allow_session,allow_always,reject_once,reject_always" ||
		strings.Join(kinds, ",") != "allow_once,allow_always,allow_always,reject_once,reject_always" {
		t.Fatalf("options: %v %v", ids, kinds)
	}
	tcu := p.ToolCall
	if p.SessionID != h.sid || tcu.ToolCallID != "e1" || len(tcu.ToolContent) != 1 || tcu.ToolContent[0].Type != "diff" ||
		*tcu.ToolContent[0].NewText != "ALPHA\n" || tcu.ToolContent[0].Path != h.path("a.txt") {
		b, _ := json.Marshal(p)
		t.Fatalf("request: %s", b)
	}
	if got := h.ws.file(h.path("a.txt")); got != "ALPHA\n" {
		t.Fatalf("file = %q", got)
	}
	if st := finalStatus(h.client.snapshot(), "e1"); st != protocol.StatusCompleted {
		t.Fatalf("status %q", st)
	}
}

func TestRejectReachesModelAndTurnGoesOn(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("ok, not editing")})
	h.client.answer = answerWith(protocol.OptionRejectOnce)
	h.newSession()
	if res := h.prompt("edit"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	if got := h.ws.file(h.path("a.txt")); got != "alpha\n" {
		t.Fatalf("file changed: %q", got)
	}
	us := callUpdates(h.client.snapshot(), "e1")
	last := us[len(us)-1]
	if last.Status != protocol.StatusFailed || !strings.Contains(string(last.RawOutput), `"denied":true`) {
		t.Fatalf("final update: %s", dumpUpdates(us))
	}
	trs := toolResults(h.prov.requests()[1].Messages)
	if len(trs) != 1 || !trs[0].IsError || !strings.Contains(trs[0].Text, "rejected") {
		t.Fatalf("model saw %+v", trs)
	}
}

func TestAllowSessionAndAlwaysAreRemembered(t *testing.T) {
	h := newHarness(t,
		editReply("e1", "alpha", "A1"), editReply("e2", "A1", "A2"), reply{events: textReply("done")},
		editReply("e3", "A2", "A3"), reply{events: textReply("done")},
	)
	h.client.answer = answerWith(protocol.OptionAllowSession)
	h.newSession()
	h.prompt("edit twice")
	if n := len(h.client.permissions()); n != 1 {
		t.Fatalf("asked %d times, want once (allow_session)", n)
	}
	// allow_session does not outlive the session.
	h.client.answer = answerWith(protocol.OptionAllowAlways)
	h.newSession()
	h.prompt("edit")
	if n := len(h.client.permissions()); n != 2 {
		t.Fatalf("asked %d times, want 2", n)
	}
	// allow_always is persisted for the project: a new daemon on the same state dir does not ask.
	h.prov.mu.Lock()
	h.prov.replies = append(h.prov.replies, editReply("e4", "A3", "A4"), reply{events: textReply("done")})
	h.prov.mu.Unlock()
	_ = h.m.Shutdown(context.Background())
	h.m = h.manager()
	h.newSession()
	h.prompt("edit again")
	if n := len(h.client.permissions()); n != 2 {
		t.Fatalf("asked %d times after restart, want no new request", n)
	}
	if got := h.ws.file(h.path("a.txt")); got != "A4\n" {
		t.Fatalf("file = %q", got)
	}
}

func TestAutoNeverAsksAndPlanRefusesWithSwitch(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("done")})
	h.newSession()
	if _, err := h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "mode", Value: ModeAuto}); err != nil {
		t.Fatal(err)
	}
	h.prompt("edit")
	if len(h.client.permissions()) != 0 || h.ws.file(h.path("a.txt")) != "ALPHA\n" {
		t.Fatalf("auto asked or did not apply")
	}
	if ms := kinds(h.client.snapshot(), protocol.UpdateCurrentModeUpdate); len(ms) != 1 || ms[0].CurrentModeID != ModeAuto {
		t.Fatalf("mode updates: %s", dumpUpdates(ms))
	}

	// plan: the user declines the switch, the model is told to propose the change as text.
	h.prov.mu.Lock()
	h.prov.replies = append(h.prov.replies, editReply("e2", "ALPHA", "x"), editReply("e3", "ALPHA", "y"), reply{events: textReply("proposal")})
	h.prov.mu.Unlock()
	res, _ := h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "mode", Value: ModePlan})
	if res.ConfigOptions[0].CurrentValue != ModePlan {
		t.Fatalf("config options: %+v", res.ConfigOptions)
	}
	h.client.answer = answerWith(protocol.OptionRejectOnce)
	h.prompt("edit in plan mode")
	perms := h.client.permissions()
	if len(perms) != 1 || perms[0].ToolCall.Kind != protocol.KindSwitchMode || perms[0].Options[0].OptionID != protocol.OptionSwitchAsk {
		t.Fatalf("want one switch_mode request, got %d", len(perms))
	}
	if h.ws.file(h.path("a.txt")) != "ALPHA\n" {
		t.Fatalf("plan mode changed the file")
	}
	trs := toolResults(h.prov.requests()[3].Messages)
	if last := trs[len(trs)-1]; !last.IsError || !strings.Contains(last.Text, "Plan mode") {
		t.Fatalf("model saw %+v", last)
	}
	// A new session of the same project starts in the persisted mode.
	res2, err := h.m.New(context.Background(), protocol.SessionNewParams{Cwd: h.dir})
	if err != nil || res2.Modes.CurrentModeID != ModePlan {
		t.Fatalf("new session mode = %+v, %v", res2.Modes, err)
	}

	// Switching to auto from the prompt lets the call go ahead.
	h.prov.mu.Lock()
	h.prov.replies = append(h.prov.replies, editReply("e4", "ALPHA", "z"), reply{events: textReply("done")})
	h.prov.mu.Unlock()
	h.client.answer = answerWith(protocol.OptionSwitchAuto)
	h.prompt("edit in plan mode again")
	if got := h.ws.file(h.path("a.txt")); got != "z\n" {
		t.Fatalf("file = %q after switching to auto", got)
	}
}

func TestNoPermissionUIDeniesInsteadOfWaiting(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("ok")})
	h.client.noUI = true
	h.newSession()
	h.prompt("edit")
	if len(h.client.permissions()) != 0 || h.ws.file(h.path("a.txt")) != "alpha\n" {
		t.Fatalf("asked a client without permissions.ui, or applied")
	}
	trs := toolResults(h.prov.requests()[1].Messages)
	if !strings.Contains(trs[0].Text, "shows no permission prompts") {
		t.Fatalf("model saw %q", trs[0].Text)
	}
}

func TestRememberedDecisionAnswersOtherPending(t *testing.T) {
	h := newHarness(t)
	h.newSession()
	s, _ := h.m.get(h.sid)
	tr := &turn{s: s, ctx: context.Background(), set: h.m.settings()}
	c := &call{id: "x", name: "edit_file", tool: editTool{}, kind: protocol.KindEdit}
	h.client.answer = nil // blocks until cancelled
	done := make(chan error, 1)
	go func() {
		done <- tr.permitFor(c)(context.Background(), toolsPermission(h.path("b.txt")))
	}()
	h.client.waitPermission(t, 1)
	s.remember(grant{Tool: "edit_file", Allow: true, Scope: "session"})
	if err := <-done; err != nil {
		t.Fatalf("pending request not answered by the remembered grant: %v", err)
	}
}

func TestPermissionRequestCarriesCommandAndCwd(t *testing.T) {
	h := newHarness(t)
	h.newSession()
	s, _ := h.m.get(h.sid)
	tr := &turn{s: s, ctx: context.Background()}
	c := &call{id: "x", name: "run_program", final: json.RawMessage(`{}`)}
	u := tr.toolCallShape(c, toolsCommand([]string{"go", "test", "./..."}))
	if !strings.Contains(string(u.RawInput), `"command":["go","test","./..."]`) || !strings.Contains(string(u.RawInput), `"cwd":"`+h.dir) {
		t.Fatalf("rawInput = %s", u.RawInput)
	}
}

func TestEditedFilesAreSavedBeforeAProgramRuns(t *testing.T) {
	h := newHarness(t,
		reply{events: callsReply(tc{"e1", "edit_file", `{"path":"a.txt","old":"alpha","new":"ALPHA"}`})},
		reply{events: callsReply(tc{"r1", "run_program", `{}`})},
		reply{events: textReply("tests pass")},
	)
	h.set.Mode = ModeAuto
	h.set.SaveBeforeRun = config.SaveAgentEdits
	h.newSession()
	h.prompt("fix and test")
	h.ws.mu.Lock()
	saved := append([]string(nil), h.ws.saved...)
	h.ws.mu.Unlock()
	if len(saved) != 1 || saved[0] != h.path("a.txt") {
		t.Fatalf("saved %v before the program ran", saved)
	}
	us := callUpdates(h.client.snapshot(), "r1")
	var progress bool
	for _, u := range us {
		progress = progress || (u.Status == "" && len(u.ToolContent) == 1 && u.ToolContent[0].Content.Text == "ok  example 0.1s")
	}
	if !progress || finalStatus(h.client.snapshot(), "r1") != protocol.StatusCompleted {
		t.Fatalf("run updates: %s", dumpUpdates(us))
	}

	// A client that cannot save gets a notice, and the model a note.
	h2 := newHarness(t,
		reply{events: callsReply(tc{"e1", "edit_file", `{"path":"a.txt","old":"alpha","new":"ALPHA"}`})},
		reply{events: callsReply(tc{"r1", "run_program", `{}`})},
		reply{events: textReply("ok")},
	)
	h2.set.Mode = ModeAuto
	h2.set.SaveBeforeRun = config.SaveAgentEdits
	h2.ws.noSave = true
	h2.newSession()
	h2.prompt("fix and test")
	trs := toolResults(h2.prov.requests()[2].Messages)
	if last := trs[len(trs)-1]; !strings.Contains(last.Text, "could not save") || !strings.Contains(last.Text, h2.path("a.txt")) {
		t.Fatalf("model saw %q", last.Text)
	}
}

func TestGrantsAreSharedBetweenDaemons(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "A1"), reply{events: textReply("done")})
	other := h.manager() // a second agentd on the same state dir (another editor)
	t.Cleanup(func() { _ = other.Shutdown(context.Background()) })
	if got := other.projects.grants(h.dir); len(got) != 0 {
		t.Fatalf("grants before: %+v", got)
	}
	h.client.answer = answerWith(protocol.OptionAllowAlways)
	h.newSession()
	h.prompt("edit")
	if got := other.projects.grants(h.dir); len(got) != 1 || got[0].Tool != "edit_file" {
		t.Fatalf("the other daemon does not see the grant: %+v", got)
	}
}

// A real exec tool reports the save note itself (Env.SaveBeforeExec); the model reads it once.
func TestTheSaveNoteReachesTheModelOnce(t *testing.T) {
	if _, err := exec.LookPath("true"); err != nil {
		t.Skip("no true program on this machine")
	}
	h := newHarness(t,
		reply{events: callsReply(tc{"e1", "edit_file", `{"path":"a.txt","old":"alpha","new":"ALPHA"}`})},
		reply{events: callsReply(tc{"r1", "run_program", `{"command":["true"]}`})},
		reply{events: textReply("ok")},
	)
	h.tools = tools.NewRegistry(editTool{}, tools.RunProgram)
	h.m = h.manager()
	h.set.Mode = ModeAuto
	h.set.SaveBeforeRun = config.SaveAgentEdits
	h.ws.noSave = true
	h.newSession()
	h.prompt("fix and test")
	trs := toolResults(h.prov.requests()[2].Messages)
	last := trs[len(trs)-1].Text
	if n := strings.Count(last, "could not save"); n != 1 || !strings.Contains(last, h.path("a.txt")) {
		t.Fatalf("the note is in the result %d times:\n%s", n, last)
	}
}

// A program the model runs sees no provider key: not the vendors' conventional variables, not
// a variable a user's provider names in apiKeyEnv, not an MCP server's oauth.clientSecretEnv. The list is the providers registry's
// (Deps.KeyEnvNames), the one home of which variables hold keys.
func TestProgramsSeeNoProviderKeys(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on this machine")
	}
	vars := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "HF_TOKEN", "MY_LAN_KEY", "MY_MCP_CLIENT_SECRET"}
	script := "echo plain=$AGENTD_TEST_PLAIN"
	for _, v := range vars {
		t.Setenv(v, "sk-secret-"+v)
		script += "; echo " + v + "=${" + v + "-unset}"
	}
	t.Setenv("AGENTD_TEST_PLAIN", "visible")
	args, _ := json.Marshal(map[string]any{"command": []string{"sh", "-c", script}})
	h := newHarness(t,
		reply{events: callsReply(tc{"r1", "run_program", string(args)})},
		reply{events: textReply("ok")},
	)
	h.tools = tools.NewRegistry(tools.RunProgram)
	h.m = h.manager()
	h.set.Mode = ModeAuto
	h.set.Providers["lan"] = config.ProviderSettings{APIType: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "MY_LAN_KEY"}
	// An MCP server's pre-registered client secret, read from the environment, is a key too.
	h.set.MCPServers = []json.RawMessage{json.RawMessage(`{"type":"http","name":"tracker","url":"http://127.0.0.1:1/mcp",
		"oauth":{"clientId":"c","issuer":"http://127.0.0.1:1","clientSecretEnv":"MY_MCP_CLIENT_SECRET"}}`)}
	h.newSession()
	h.prompt("show the environment")
	trs := toolResults(h.prov.requests()[1].Messages)
	out := trs[len(trs)-1].Text
	if strings.Contains(out, "sk-secret") || !strings.Contains(out, "plain=visible") {
		t.Fatalf("the program's output:\n%s", out)
	}
	for _, v := range vars {
		if !strings.Contains(out, v+"=unset") {
			t.Fatalf("%s reached the program:\n%s", v, out)
		}
	}
}

// A fetch's lasting answers name its host, since they cover that host only; other requests keep
// the standard names.
func TestFetchOptionsNameTheHost(t *testing.T) {
	names := map[string]string{}
	for _, o := range optionsFor(tools.PermissionRequest{Kind: "fetch", Host: "pkg.go.dev"}) {
		names[o.OptionID] = o.Name
	}
	want := map[string]string{
		protocol.OptionAllowOnce:    "Allow once",
		protocol.OptionAllowSession: "Allow pkg.go.dev for this session",
		protocol.OptionAllowAlways:  "Always allow pkg.go.dev in this project",
		protocol.OptionRejectOnce:   "Reject",
		protocol.OptionRejectAlways: "Always reject pkg.go.dev in this project",
	}
	for id, name := range want {
		if names[id] != name {
			t.Errorf("%s: %q, want %q", id, names[id], name)
		}
	}
	if got := optionsFor(tools.PermissionRequest{Kind: "edit"}); got[2].Name != "Always allow in this project" || permissionOptions()[2].Name != got[2].Name {
		t.Errorf("an edit's options: %+v", got)
	}
}
