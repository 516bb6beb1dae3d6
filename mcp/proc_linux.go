package mcp

import "syscall"

// dieWithParent asks the kernel to SIGKILL the server when agentd goes away without a word
// (kill -9, OOM), when nothing of agentd's own cleanup runs. It reaches the server itself; what the
// server started sees its stdin closed, which is how MCP's stdio transport says "shut down".
// (The signal follows the thread that started the child; agentd never ends an OS thread early,
// since nothing in it calls runtime.LockOSThread.)
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
