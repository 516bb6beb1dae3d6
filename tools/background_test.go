//go:build unix

package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A background program answers at once with its id; program_output returns what it printed
// since the last read and its state; program_stop ends it with what it started; a session holds
// at most MaxBackground running; closing the table ends them all.
func TestBackgroundPrograms(t *testing.T) {
	h := newHarness(t, nil)
	h.env.Programs = NewPrograms()
	start := time.Now()
	r := mustOK(t, h.run("run_program", map[string]any{"command": []string{"sh", "-c", "echo ready; sleep 300 & echo $! > child.pid; while :; do sleep 0.05; done"}, "background": true}))
	if time.Since(start) > 5*time.Second {
		t.Fatalf("a background start waited %s", time.Since(start))
	}
	id, _ := r.Raw.(map[string]any)["programId"].(string)
	if id == "" || len(h.asked) != 1 {
		t.Fatalf("result %+v, asked %d times", r, len(h.asked))
	}
	var out Result
	deadline := time.Now().Add(10 * time.Second)
	for {
		out = mustOK(t, h.run("program_output", map[string]any{"program_id": id}))
		if strings.Contains(out.Output, "]\nready\n") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mustContain(t, out.Output, "]\nready\n", id+": running")
	again := mustOK(t, h.run("program_output", map[string]any{"program_id": id}))
	if strings.Contains(again.Output, "]\nready") {
		t.Errorf("a second read repeats the output: %q", again.Output)
	}
	var b []byte
	var err error
	for b, err = os.ReadFile(filepath.Join(h.root, "child.pid")); len(b) == 0 && time.Now().Before(deadline); b, err = os.ReadFile(filepath.Join(h.root, "child.pid")) {
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	var child int
	fmt.Sscan(string(b), &child)
	mustContain(t, mustOK(t, h.run("program_stop", map[string]any{"program_id": id})).Output, "stopped")
	mustContain(t, mustOK(t, h.run("program_output", map[string]any{"program_id": id})).Output, "stopped")
	if err := syscall.Kill(child, 0); err == nil && !zombieProc(child) {
		t.Errorf("the program's child %d outlived program_stop", child)
	}
	if r := h.run("program_output", map[string]any{"program_id": "prog_99"}); !r.IsError || !strings.Contains(r.Output, id) {
		t.Errorf("an unknown id: %+v", r)
	}

	for i := 0; i < MaxBackground; i++ {
		mustOK(t, h.run("run_program", map[string]any{"command": []string{"sleep", "300"}, "background": true}))
	}
	if r := h.run("run_program", map[string]any{"command": []string{"sleep", "300"}, "background": true}); !r.IsError || !strings.Contains(r.Output, "program_stop") {
		t.Errorf("a ninth background program: %+v", r)
	}
	h.env.Programs.Close()
	for _, p := range h.env.Programs.m {
		if p.state() == "running" {
			t.Errorf("%s still runs after Close", p.id)
		}
	}
	h.env.Programs = nil
	if r := h.run("run_program", map[string]any{"command": []string{"true"}, "background": true}); !r.IsError {
		t.Errorf("background without a table: %+v", r)
	}
}

// The output kept between reads is bounded: the latest backgroundRing bytes, and the read says
// how much was dropped.
func TestBackgroundOutputRing(t *testing.T) {
	p := &bgProgram{id: "prog_1", done: make(chan struct{})}
	chunk := []byte(strings.Repeat("x", 1000) + "\n")
	for i := 0; i < 2*backgroundRing/len(chunk); i++ {
		p.Write(chunk)
	}
	if len(p.buf) != backgroundRing || p.dropped == 0 {
		t.Fatalf("kept %d bytes, dropped %d", len(p.buf), p.dropped)
	}
}

func zombieProc(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}
