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
