//go:build linux

package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
)

// A session's background programs end with it: on close, and for every session on shutdown.
func TestBackgroundProgramsEndWithTheSession(t *testing.T) {
	for _, end := range []string{"close", "shutdown"} {
		t.Run(end, func(t *testing.T) {
			args, _ := json.Marshal(map[string]any{"command": []string{"sh", "-c", "echo $$ > bg.pid; exec sleep 300"}, "background": true})
			h := newHarness(t,
				reply{events: callsReply(tc{"r1", "run_program", string(args)})},
				reply{events: textReply("ok")},
			)
			h.tools = tools.NewRegistry(tools.RunProgram, tools.ProgramOutput, tools.ProgramStop)
			h.m = h.manager()
			h.set.Mode = ModeAuto
			h.newSession()
			h.prompt("start it")
			pidFile := filepath.Join(h.dir, "bg.pid")
			var pid string
			for deadline := time.Now().Add(10 * time.Second); pid == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				b, _ := os.ReadFile(pidFile)
				pid = strings.TrimSpace(string(b))
			}
			if _, err := os.Stat("/proc/" + pid); pid == "" || err != nil {
				t.Fatalf("the background program is not running (pid %q): %v", pid, err)
			}
			if end == "close" {
				if err := h.m.Close(context.Background(), h.sid); err != nil {
					t.Fatal(err)
				}
			} else {
				h.m.Shutdown(context.Background())
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				b, err := os.ReadFile("/proc/" + pid + "/stat")
				if err != nil || strings.Contains(string(b), ") Z ") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the background program outlived the session's %s", end)
				}
			}
		})
	}
}

// The user lists and stops a session's background programs (agent/x/programs/list and stop):
// the list names the program, its command and the call that started it; stop kills it, and the
// call that started it gets a tool_call_update saying it ended. An id the session does not have,
// or another session's, is refused by name.
func TestUserListsAndStopsBackgroundPrograms(t *testing.T) {
	args, _ := json.Marshal(map[string]any{"command": []string{"sleep", "300"}, "background": true})
	h := newHarness(t,
		reply{events: callsReply(tc{"r1", "run_program", string(args)})},
		reply{events: textReply("ok")},
	)
	h.tools = tools.NewRegistry(tools.RunProgram, tools.ProgramOutput, tools.ProgramStop)
	h.m = h.manager()
	h.set.Mode = ModeAuto
	h.newSession()
	h.prompt("start it")
	ctx := context.Background()
	list, err := h.m.Programs(ctx, protocol.SessionIDParams{SessionID: h.sid})
	if err != nil || len(list.Programs) != 1 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	p := list.Programs[0]
	if p.ProgramID != "prog_1" || p.State != "running" || strings.Join(p.Command, " ") != "sleep 300" || p.ToolCallID != "r1" || p.ExitCode != nil || p.Sandboxed {
		t.Errorf("the program listed = %+v", p)
	}
	if _, err := h.m.StopProgram(ctx, protocol.ProgramStopParams{SessionID: h.sid, ProgramID: "prog_9"}); err == nil || !strings.Contains(err.Error(), "programId") {
		t.Errorf("stopping an unknown program: %v", err)
	}
	if _, err := h.m.StopProgram(ctx, protocol.ProgramStopParams{SessionID: "nope", ProgramID: "prog_1"}); err == nil {
		t.Error("another session's id was accepted")
	}
	got, err := h.m.StopProgram(ctx, protocol.ProgramStopParams{SessionID: h.sid, ProgramID: "prog_1"})
	if err != nil || got.State != "stopped" || got.ExitCode == nil {
		t.Fatalf("stop = %+v, %v", got, err)
	}
	h.client.waitFor(t, "the program's end on its call", func(us []protocol.SessionUpdate) bool {
		for _, u := range us {
			if u.ToolCallID == "r1" && u.Meta[MetaProgram] != nil {
				pr, ok := u.Meta[MetaProgram].(map[string]any)
				return ok && pr["state"] == "stopped" && pr["programId"] == "prog_1"
			}
		}
		return false
	})
	list, _ = h.m.Programs(ctx, protocol.SessionIDParams{SessionID: h.sid})
	if len(list.Programs) != 1 || list.Programs[0].State != "stopped" {
		t.Errorf("after the stop, the list = %+v", list)
	}
}
