//go:build !linux

package tools

import "os/exec"

// dieWithAgentd: only Linux can tie a child's life to its parent's; elsewhere KillLeftovers at
// agentd's exit ends background programs, and SIGKILL of agentd leaves them.
func dieWithAgentd(*exec.Cmd) {}
