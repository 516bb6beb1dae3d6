package tools

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The kernel's children files and the /proc scan they replace name the same live children.
func TestOwnChildrenMatchesTheScan(t *testing.T) {
	if _, err := os.Stat(childrenFile(os.Getpid())); err != nil {
		t.Skip("no CONFIG_PROC_CHILDREN")
	}
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if !hasChildren() {
		t.Fatal("hasChildren = false with a child running")
	}
	if got := ownChildren(); !slices.Contains(got, cmd.Process.Pid) {
		t.Fatalf("ownChildren = %v, want it to hold %d", got, cmd.Process.Pid)
	}
	if !childOf(strconv.Itoa(os.Getpid()))("/proc/" + strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("the scan's match does not take child %d", cmd.Process.Pid)
	}
	if zombie(cmd.Process.Pid) {
		t.Fatalf("a running child counts as a zombie")
	}
	cmd.Process.Kill()
	for !zombie(cmd.Process.Pid) {
		time.Sleep(time.Millisecond)
	}
	if childOf(strconv.Itoa(os.Getpid()))("/proc/" + strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("the scan's match takes the zombie %d", cmd.Process.Pid)
	}
	cmd.Wait()
	if slices.Contains(ownChildren(), cmd.Process.Pid) {
		t.Fatalf("a reaped child is still listed")
	}
}

// subreaperHelper is set in the copy of the test binary that TestKillAdoptedKillsOrphans
// starts: that process becomes a subreaper, which the test binary itself must not.
const subreaperHelper = "AGENTD_TOOLS_SUBREAPER_HELPER"

// An orphan that left the process group (setsid) after its parent exited becomes the
// subreaper's child, and killAdopted kills it and the child it started in turn.
func TestKillAdoptedKillsOrphans(t *testing.T) {
	if os.Getenv(subreaperHelper) == "" {
		if _, err := exec.LookPath("setsid"); err != nil {
			t.Skip("no setsid")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillAdoptedKillsOrphans$", "-test.v")
		cmd.Env = append(os.Environ(), subreaperHelper+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "orphans killed") {
			t.Fatalf("the subreaper helper: %v\n%s", err, out)
		}
		return
	}
	if err := BecomeSubreaper(); err != nil {
		t.Skip("no child subreaper:", err)
	}
	// The orphan (setsid sh) starts a sleep of its own, so the second pass has work too. Its
	// output goes to a file: a pipe it held open would keep Output waiting.
	pidFile := t.TempDir() + "/orphan.pid"
	if err := exec.Command("sh", "-c", "setsid sh -c 'sleep 300 & wait' >/dev/null 2>&1 & echo $! > "+pidFile).Run(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(ownChildren(), orphan) {
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d never became our child (children %v)", orphan, ownChildren())
		}
		time.Sleep(time.Millisecond)
	}
	killAdopted()
	for _, pid := range ownChildren() {
		if !zombie(pid) {
			t.Fatalf("child %d outlived killAdopted", pid)
		}
	}
	// Reap what was killed, so the helper leaves no zombie behind.
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(-1, &ws, 0, nil); err != nil {
			break
		}
	}
	if hasChildren() {
		t.Fatal("hasChildren = true with every child reaped")
	}
	t.Log("orphans killed")
}
