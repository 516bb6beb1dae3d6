//go:build windows

package tools

import (
	"os/exec"
	"strconv"
	"syscall"
)

// setProcessGroup starts the program in a new process group; a timeout or a cancel kills the
// whole tree with taskkill /T, falling back to the direct child.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
		if err := kill.Run(); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}

func shellCommand(script string) []string { return []string{"cmd.exe", "/C", script} }

// killGroup: once the program has exited, taskkill /T can no longer walk from it to what it
// started, so background children of a program that exits normally survive on Windows.
func killGroup(*exec.Cmd) {}
