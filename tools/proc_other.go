//go:build !unix && !windows

package tools

import "os/exec"

// setProcessGroup: this platform has no process groups; the direct child is killed.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return cmd.Process.Kill()
	}
}

func shellCommand(script string) []string { return []string{"sh", "-c", script} }

// killGroup: without process groups nothing more can be found.
func killGroup(*exec.Cmd) {}
