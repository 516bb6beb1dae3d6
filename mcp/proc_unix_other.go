//go:build unix && !linux

package mcp

import "syscall"

// dieWithParent has no equivalent here: a server outlives a SIGKILLed agentd until it reads the
// end of its stdin.
func dieWithParent(*syscall.SysProcAttr) {}
