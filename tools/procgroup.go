package tools

import "os/exec"

// InOwnGroup makes cmd start in its own process group, as the exec tools' programs do, so that
// its context ending kills everything it spawned (on Unix; on Windows the direct child). The
// returned func kills what is left of the group once cmd has exited. The engine's hooks use it.
func InOwnGroup(cmd *exec.Cmd) (cleanup func()) {
	setProcessGroup(cmd)
	return func() { killGroup(cmd) }
}
