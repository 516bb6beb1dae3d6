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
