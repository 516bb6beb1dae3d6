//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the program in its own process group so a timeout or a cancel kills
// everything it spawned, not just the direct child.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		// The group id is the child's pid (Setpgid with Pgid 0).
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}

func shellCommand(script string) []string { return []string{"/bin/sh", "-c", script} }

// killGroup kills what is left of the program's process group once the program has exited:
// children it started in the background, with nohup too. The group id stays reserved while any
// member lives, so the signal cannot reach another program's group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
