package acceptance_test

// Issue 26 item 1: what agentd reads on its own (instruction files, command files) goes through
// os.Root, so a cloned repository's link cannot put agentd's environment or the user's secrets
// into the request the provider receives.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/fakemodel"
	"github.com/agentd-dev/agentd/rpc/protocol"
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
