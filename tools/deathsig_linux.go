package tools

import (
	"os/exec"
	"syscall"
)

// dieWithAgentd asks the kernel to SIGKILL a background program when agentd goes away, even by
// SIGKILL (call after setProcessGroup, which makes SysProcAttr).
func dieWithAgentd(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
