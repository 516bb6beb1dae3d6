package session

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// TestCrashHelper is the child of TestKill9KeepsEarlierHistory: it runs turns forever on a
// state dir until it is killed.
func TestCrashHelper(t *testing.T) {
	state, dir := os.Getenv("AGENTD_CRASH_STATE"), os.Getenv("AGENTD_CRASH_DIR")
	if state == "" {
		t.Skip("only runs as the child of TestKill9KeepsEarlierHistory")
	}
	prov := &loopProvider{reply: func(n int) []providers.Event {
		if n%2 == 1 {
			return callsReply(tc{fmt.Sprintf("c%d", n), "read_file", `{"path":"a.txt"}`})
		}
		return textReply(strings.Repeat("answer ", 200))
	}}
	ws := &fakeWS{files: map[string]string{filepath.Join(dir, "a.txt"): strings.Repeat("data\n", 2000)}}
	m := NewManager(Deps{
		Client:     nopClient{},
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return ws },
		Providers:  fakeSource{p: prov},
		Tools:      tools.NewRegistry(readTool{}),
		Settings:   func() config.Settings { return config.Settings{} },
		StateDir:   state,
	})
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(ns.SessionID)
	for i := 0; ; i++ {
		m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock(fmt.Sprintf("turn %d", i))}})
	}
}

func TestKill9KeepsEarlierHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	// Kill it once the transcript has grown past a few turns, mid-write as likely as not.
	state, dir, sid := killChildWhen(t, "TestCrashHelper", "AGENTD_CRASH_", "the child wrote no transcript", func(path string) bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Size() > 200<<10
	})

	st := &store{dir: filepath.Join(state, "sessions")}
	l, err := st.load(sid, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.history) < 6 {
		t.Fatalf("only %d messages survived", len(l.history))
	}
	// The history is an unbroken prefix: turns in order, every tool call answered except
	// possibly in the last, interrupted step.
	turn := 0
	for i, m := range l.history {
		if m.Role == providers.RoleUser && !isToolResults(m) {
			if want := fmt.Sprintf("turn %d", turn); m.Parts[0].Text != want {
				t.Fatalf("message %d is %q, want %q", i, m.Parts[0].Text, want)
			}
			turn++
		}
	}
	// A new daemon resumes it and can prompt again.
	h := newHarness(t, reply{events: textReply("back")})
	h.state = state
	h.m = h.manager()
	if _, err := h.m.Resume(context.Background(), protocol.SessionLoadParams{SessionID: sid, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	h.sid = sid
	if res := h.prompt("after the crash"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	reqs := h.prov.requests()
	checkWellFormed(t, reqs[len(reqs)-1].Messages)
}

// checkWellFormed fails unless every assistant tool call is answered by the next message.
func checkWellFormed(t *testing.T, msgs []providers.Message) {
	t.Helper()
	for i, m := range msgs {
		if m.Role != providers.RoleAssistant {
			continue
		}
		for _, p := range m.Parts {
			if p.Type != providers.PartToolCall {
				continue
			}
			ok := false
			if i+1 < len(msgs) {
				for _, r := range msgs[i+1].Parts {
					ok = ok || (r.Type == providers.PartToolResult && r.ToolCallID == p.ToolCallID)
				}
			}
			if !ok {
				t.Fatalf("tool call %s in message %d has no result", p.ToolCallID, i)
			}
		}
	}
}

func TestRepairAnswersCallsInterruptedByACrash(t *testing.T) {
	call := func(id string) providers.Part {
		return providers.Part{Type: providers.PartToolCall, ToolCallID: id, ToolName: "read_file", Args: []byte(`{}`)}
	}
	result := func(id string) providers.Part {
		return providers.Part{Type: providers.PartToolResult, ToolCallID: id, ToolName: "read_file", Text: "ok"}
	}
	h := []providers.Message{
		{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "go"}}},
		{Role: providers.RoleAssistant, Parts: []providers.Part{call("a"), call("b")}},
		{Role: providers.RoleUser, Parts: []providers.Part{result("a")}},
		{Role: providers.RoleAssistant, Parts: []providers.Part{call("c")}},
	}
	out := repairHistory(h, nil)
	checkWellFormed(t, out)
	if len(out) != 5 || out[2].Parts[0].Text != "ok" || out[2].Parts[1].Text != interruptedOutput(nil) || !strings.HasPrefix(out[2].Parts[1].Text, "agentd stopped before this call finished") || out[4].Parts[0].ToolCallID != "c" {
		t.Fatalf("repaired: %+v", out)
	}
}

// killChildWhen runs the test binary's helper test as a child daemon on a fresh state dir and
// project (handed over as envPrefix+"STATE" and envPrefix+"DIR"), reads the session id it prints
// first, and SIGKILLs it once ready holds for that session's transcript: a daemon dying with
// no chance to tidy up.
func killChildWhen(t *testing.T, helper, envPrefix, never string, ready func(transcript string) bool) (state, dir, sid string) {
	t.Helper()
	state, dir = t.TempDir(), t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$")
	cmd.Env = append(os.Environ(), envPrefix+"STATE="+state, envPrefix+"DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	sid = strings.TrimSpace(strings.SplitN(string(buf[:n]), "\n", 2)[0])
	path := filepath.Join(state, "sessions", sid+".jsonl")
	deadline := time.Now().Add(10 * time.Second)
	for !ready(path) {
		if time.Now().After(deadline) {
			t.Fatal(never)
		}
		time.Sleep(5 * time.Millisecond) // polling a file with a deadline
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return state, dir, sid
}
