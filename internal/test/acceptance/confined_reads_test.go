package acceptance_test

// Issue 26 item 1: what agentd reads on its own (instruction files, command files) goes through
// os.Root, so a cloned repository's link cannot put agentd's environment or the user's secrets
// into the request the provider receives.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// procHome is the HOME startProc gave the daemon.
func procHome(e *env) string {
	// The last HOME= wins: startProc appends its own after the test's environment.
	for i := len(e.p.cmd.Env) - 1; i >= 0; i-- {
		if h, ok := strings.CutPrefix(e.p.cmd.Env[i], "HOME="); ok {
			return h
		}
	}
	e.t.Fatal("no HOME in the daemon's environment")
	return ""
}

// Through the binary, as an attacker's repository would: AGENTS.md -> /proc/self/environ,
// CLAUDE.md -> a file outside holding a secret, GEMINI.md -> a fake secrets.json, a project
// command file linking out, and the user's own AGENTS.md and command linking out of
// ~/.config/agentd: none of the targets reaches the provider, each refusal is a notice, and an
// instruction file linking inside the project still works.
func TestInstructionAndCommandLinksOutAreRefused(t *testing.T) {
	t.Parallel()
	const envSecret = "AGENTD_TEST_ENV_SECRET_7f3a"
	fm, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "ok"}, {Text: "ok"}}, Routes: titleRoute})
	root := realDir(t)
	e := startIn(t, fakeeditor.Full(), openaiSettings(url, nil), "", root, "AGENTD_LEAK_PROBE="+envSecret)

	outside := t.TempDir()
	write := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "id_ed25519"), "SSH-KEY-SECRET-b21c")
	write(filepath.Join(outside, "secrets.json"), `{"anthropic":"SECRETS-JSON-KEY-99d0"}`)
	write(filepath.Join(outside, "cmd.md"), "COMMAND-FILE-SECRET-4e11")
	write(filepath.Join(outside, "user.md"), "USER-AGENTS-SECRET-0a0a")
	write(filepath.Join(outside, "usercmd.md"), "USER-COMMAND-SECRET-5151")
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	link("/proc/self/environ", filepath.Join(root, "AGENTS.md"))
	link(filepath.Join(outside, "id_ed25519"), filepath.Join(root, "a", "CLAUDE.md"))
	link("../../../"+filepath.Base(outside)+"/secrets.json", filepath.Join(root, "a", "b", "GEMINI.md"))
	write(filepath.Join(root, "docs", "guide.md"), "Inside guide: use tabs.")
	link("../../../docs/guide.md", filepath.Join(root, "a", "b", "c", "AGENTS.md"))
	link(filepath.Join(outside, "cmd.md"), filepath.Join(root, ".agentd", "commands", "steal.md"))
	home := procHome(e)
	link(filepath.Join(outside, "user.md"), filepath.Join(home, "config", "agentd", "AGENTS.md"))
	link(filepath.Join(outside, "usercmd.md"), filepath.Join(home, "config", "agentd", "commands", "usersteal.md"))

	cwd := filepath.Join(root, "a", "b", "c")
	res, err := e.ed.NewSession(ctxT(t), cwd)
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	sid := res.SessionID
	e.ed.WaitUpdateKind(sid, protocol.UpdateAvailableCommandsUpdate)
	e.prompt(sid, "/steal now")
	e.prompt(sid, "/usersteal now")

	reqs := fm.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the model")
	}
	all := string(joinBodies(reqs))
	for _, secret := range []string{envSecret, "SSH-KEY-SECRET-b21c", "SECRETS-JSON-KEY-99d0", "COMMAND-FILE-SECRET-4e11", "USER-AGENTS-SECRET-0a0a", "USER-COMMAND-SECRET-5151", "PATH=", "HOME="} {
		if strings.Contains(all, secret) {
			t.Errorf("the provider received %q through a link out of the roots", secret)
		}
	}
	if !strings.Contains(all, "Inside guide: use tabs.") {
		t.Errorf("an instruction file linking inside the project was not read")
	}
	var notices []string
	for _, u := range e.ed.Updates() {
		if u.SessionID == sid && u.Update.SessionUpdate == protocol.UpdateNotice {
			notices = append(notices, u.Update.NoticeTitle+": "+u.Update.Description)
		}
	}
	joined := strings.Join(notices, "\n")
	for _, want := range []string{filepath.Join(root, "AGENTS.md"), filepath.Join(root, "a", "CLAUDE.md"), filepath.Join(root, "a", "b", "GEMINI.md"), "steal.md", "usersteal.md", filepath.Join(home, "config", "agentd", "AGENTS.md")} {
		if !strings.Contains(joined, want) {
			t.Errorf("no notice names the refused %s; notices:\n%s", want, joined)
		}
	}
}

func joinBodies(bs [][]byte) []byte {
	var out []byte
	for _, b := range bs {
		// The bodies are JSON: unescape them so a secret escaped inside a string is found too.
		var v any
		if json.Unmarshal(b, &v) == nil {
			b = append(b, fmt.Sprint(v)...)
		}
		out = append(append(out, b...), '\n')
	}
	return out
}

// Through the binary: a file indexed for semantic_search and then swapped for a link to a
// secret outside the project is not re-read through the link when it comes up as a hit; the
// request the provider receives holds nothing of the secret.
func TestSemanticHitSwappedForLinkOutThroughTheBinary(t *testing.T) {
	t.Parallel()
	fm, base := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_s", Name: "semantic_search", Arguments: json.RawMessage(`{"query":"where is the password verified against the stored hash","max_results":2}`)}}},
		{Text: "done"},
	}})
	settings, _ := json.Marshal(map[string]any{
		"provider":  "fm",
		"providers": map[string]any{"fm": map[string]any{"apiType": "openai", "baseUrl": base, "model": fakemodel.ModelID, "embeddingModel": "fake-embed"}},
	})
	root := realDir(t)
	e := startIn(t, fakeeditor.Full(), settings, "", root)
	login := e.writeFile("auth/login.go", "package auth\n\n// Login verifies the password against the stored hash.\nfunc Login() {}\n")
	e.writeFile("db/migrate.go", "package db\n\n// Migrate upgrades the database tables.\nfunc Migrate() {}\n")
	sid := e.newSession()
	e.ed.Wait("the semantic index is ready", func() bool {
		for _, n := range kinds(e.rawUpdates(sid), "notice") {
			if n["title"] == "Semantic index ready" {
				return true
			}
		}
		return false
	})
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(secret, []byte("SEMANTIC-LINK-SECRET-1\nSEMANTIC-LINK-SECRET-2\nSEMANTIC-LINK-SECRET-3\nSEMANTIC-LINK-SECRET-4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(login); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, login); err != nil {
		t.Fatal(err)
	}
	e.prompt(sid, "where is the password checked?")
	for _, b := range fm.Requests() {
		if strings.Contains(string(b), "SEMANTIC-LINK-SECRET") {
			t.Fatalf("a hit was re-read through a link out of the project:\n%s", b)
		}
	}
}

// Through the binary (issue 26 items 1 and 10): checkpoint logs planted in the state directory,
// one claiming a length of 2^62 bytes, one a negative length and one a link to a log outside,
// neither crash the daemon that loads the session nor make the session unloadable: the load
// answers, the real checkpoint is listed, the planted one is not, and a notice names the bad logs.
func TestCorruptCheckpointLogsThroughTheBinary(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	settings := replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "c", "name": "create_file",
			"args": map[string]any{"path": "notes.txt", "content": "remember\n", "overwrite": true}}}},
		map[string]any{"text": "Rewrote notes.txt."},
	))
	opts := fakeeditor.Full()
	e := startIn(t, opts, settings, "", root)
	e.writeFile("notes.txt", "old\n")
	sid := e.newSession()
	e.setMode(sid, "auto")
	if res := e.prompt(sid, "rewrite the notes"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	if err := e.ed.Shutdown(ctxT(t)); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	e.p.waitExit(exitGuard)

	dirs, _ := filepath.Glob(filepath.Join(e.p.state, "*", "*", sid+".checkpoints"))
	if len(dirs) == 0 {
		dirs, _ = filepath.Glob(filepath.Join(e.p.state, "*", sid+".checkpoints"))
	}
	if len(dirs) != 1 {
		t.Fatalf("checkpoint directory of %s not found under %s", sid, e.p.state)
	}
	dir := dirs[0]
	for name, text := range map[string]string{
		"zz-huge.log": `{"blob":1,"len":4611686018427387904}` + "\n",
		"zz-neg.log":  `{"blob":1,"len":-9}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	planted := filepath.Join(t.TempDir(), "planted.log")
	before := "PLANTED-PRE-IMAGE\n"
	index := `{"index":{"id":"planted","prompt":"planted","files":[{"path":"` + filepath.Join(root, "notes.txt") + `","change":"modified","beforeKnown":true,"blob":1}]}}`
	if err := os.WriteFile(planted, []byte(`{"blob":1,"len":`+strconv.Itoa(len(before))+"}\n"+before+index+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(planted, filepath.Join(dir, "zz-link.log")); err != nil {
		t.Fatal(err)
	}

	e2 := startIn(t, opts, settings, e.p.state, root)
	var lr protocol.SessionLoadResult
	if err := e2.ed.Call(ctxT(t), protocol.MethodSessionLoad, protocol.SessionLoadParams{SessionID: sid, Cwd: root}, &lr); err != nil {
		t.Fatalf("load with corrupt checkpoint logs: %v", err)
	}
	var list protocol.CheckpointListResult
	if err := e2.ed.Call(ctxT(t), protocol.MethodCheckpointsList, protocol.SessionIDParams{SessionID: sid}, &list); err != nil {
		t.Fatalf("checkpoints/list: %v", err)
	}
	if len(list.Checkpoints) != 1 || list.Checkpoints[0].Prompt != "rewrite the notes" {
		t.Fatalf("checkpoints after load: %+v", list)
	}
	var notices []string
	for _, n := range kinds(e2.rawUpdates(sid), "notice") {
		notices = append(notices, fmt.Sprint(n["title"], ": ", n["description"]))
	}
	all := strings.Join(notices, "\n")
	for _, name := range []string{"zz-huge.log", "zz-neg.log", "zz-link.log"} {
		if !strings.Contains(all, name) {
			t.Errorf("no notice names %s:\n%s", name, all)
		}
	}
}
