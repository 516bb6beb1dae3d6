package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parentOfAServer is the child process of TestKilledAgentdTakesItsServers: it starts a server
// that ignores the end of its stdin, writes the server's pid, and waits to be killed.
func parentOfAServer(pidFile string) {
	testServer = os.Getenv("MCP_TEST_SERVER")
	set := NewPool(nil).Open([]Config{stdioConfig("stay", "-stay")}, builtin(), nil)
	set.Snapshot(context.Background())
	sv := set.servers[0]
	sv.mu.Lock()
	pid := sv.pid
	sv.mu.Unlock()
	_ = os.WriteFile(pidFile, []byte(strconv.Itoa(pid)), 0o600)
	select {}
}

// A SIGKILLed agentd runs none of its cleanup; the kernel still kills its stdio servers, even one
// that would outlive the end of its stdin.
func TestKilledAgentdTakesItsServers(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), "MCP_TEST_PARENT="+pidFile, "MCP_TEST_SERVER="+testServer)
	parent.Stderr = os.Stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	pid := 0
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the parent never reported its server's pid")
		}
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(string(b))
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !alive(pid) {
		t.Fatalf("server %d is not running before the parent is killed", pid)
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("server %d still runs 10 s after its agentd was SIGKILLed", pid)
		}
	}
}

// alive says whether pid runs (a zombie no longer does: nothing may reap it here).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] != 'Z'
}
