//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the server in its own process group, so whatever it spawns is killed with it,
// and (on Linux) has the kernel kill it when agentd dies, even by SIGKILL (dieWithParent).
func ownGroup(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(attr)
	cmd.SysProcAttr = attr
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	// The group id is the child's pid (Setpgid with Pgid 0).
	if syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) != nil {
		_ = cmd.Process.Kill()
	}
}
