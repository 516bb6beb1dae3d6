package session

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
)

// A program the user let run can write agentd's state dir. Whatever it writes there (the old
// unsigned form, or a signed form with a signature it made up) is not honoured: the project does
// not turn into auto mode with "*" grants, and the user is told.
func TestRewrittenProjectStateIsRefusedWithANotice(t *testing.T) {
	for name, forge := range map[string]func(state []byte) []byte{
		"unsigned": func(state []byte) []byte { return state },
		"forged signature": func(state []byte) []byte {
			b, _ := json.Marshal(signedState{State: state, MAC: strings.Repeat("ab", 32)})
			return b
		},
		"not json": func([]byte) []byte { return []byte("{auto") },
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, editReply("e1", "alpha", "PWNED"), reply{events: textReply("done")})
			// agentd itself writes the project's state once (a mode change), so a key exists.
			h.newSession()
			if _, err := h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "mode", Value: ModePlan}); err != nil {
				t.Fatal(err)
			}
			state, _ := json.Marshal(projectState{Path: h.dir, Mode: ModeAuto, Grants: []grant{{Tool: "*", Allow: true, Scope: "project"}}})
			file := h.m.projects.file(h.dir)
			if err := os.WriteFile(file, forge(state), 0o600); err != nil {
				t.Fatal(err)
			}
			h.client.answer = answerWith(protocol.OptionRejectOnce)
			res, err := h.m.New(context.Background(), protocol.SessionNewParams{Cwd: h.dir})
			if err != nil {
				t.Fatal(err)
			}
			h.sid = res.SessionID
			if res.Modes.CurrentModeID == ModeAuto {
				t.Fatalf("the rewritten state put the session in auto mode")
			}
			h.prompt("edit")
			if got := h.ws.file(h.path("a.txt")); got != "alpha\n" {
				t.Fatalf("the forged grant let an edit through: a.txt = %q", got)
			}
			if len(h.client.permissions()) != 1 {
				t.Fatalf("asked %d times, want the edit asked about", len(h.client.permissions()))
			}
			var told bool
			for _, u := range kinds(h.client.snapshot(), protocol.UpdateNotice) {
				if u.NoticeTitle == "Remembered permissions not applied" && strings.Contains(u.Description, file) {
					told = true
				}
			}
			if !told {
				t.Fatalf("no notice of the refused state; updates: %s", dumpUpdates(h.client.snapshot()))
			}
		})
	}
}

// What agentd writes itself it honours, in this daemon and in the next one.
func TestProjectStateAgentdWroteIsHonoured(t *testing.T) {
	h := newHarness(t)
	h.newSession()
	if _, err := h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "mode", Value: ModeAuto}); err != nil {
		t.Fatal(err)
	}
	h.m.projects.addGrant(h.dir, grant{Tool: "edit_file", Allow: true, Scope: "project"})
	other := h.manager()
	t.Cleanup(func() { _ = other.Shutdown(context.Background()) })
	if got := other.projects.mode(h.dir, ModeAsk); got != ModeAuto {
		t.Fatalf("mode = %q, want auto", got)
	}
	if got := other.projects.grants(h.dir); len(got) != 1 || got[0].Tool != "edit_file" {
		t.Fatalf("grants = %+v", got)
	}
	if n := other.projects.refusal(h.dir); n != "" {
		t.Fatalf("refused agentd's own file: %s", n)
	}
	// A key file outside the state dir, readable by the user alone.
	fi, err := os.Stat(h.state + ".key")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
}

// A session started in a subfolder of a workspace folder has the whole folder as a root (the
// folder Deps.Project names), and reads its settings through Deps.Project, not Settings.
func TestSessionInASubfolderHasItsFolderAsRoot(t *testing.T) {
	h := newHarness(t)
	sub := h.path("pkg")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	m := NewManager(Deps{Client: h.client, Providers: fakeSource{p: h.prov}, StateDir: h.state, StateKeyFile: h.state + ".key",
		Settings: func() config.Settings { return h.set },
		Project: func(cwd string) (string, func() config.Settings) {
			if cwd != sub {
				t.Errorf("Project(%q), want the session's cwd", cwd)
			}
			return h.dir, func() config.Settings { st := h.set; st.Mode = ModePlan; return st }
		}})
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	res, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: sub})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := m.get(res.SessionID)
	if !slices.Contains(s.roots.Dirs(), h.dir) || s.roots.Cwd() != sub {
		t.Fatalf("roots = %v (cwd %s), want the folder %s among them", s.roots.Dirs(), s.roots.Cwd(), h.dir)
	}
	if res.Modes.CurrentModeID != ModePlan {
		t.Fatalf("mode = %s, want the session's own settings' plan", res.Modes.CurrentModeID)
	}
}
