//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
)

var (
	probeOnce sync.Once
	probed    Status
)

func probe() Status {
	return Status{Unsupported: true, Reason: "agentd has no sandbox for " + runtime.GOOS}
}

// Wrap fails: there is no sandbox on this platform (Probe says so first).
func Wrap(cmd *exec.Cmd, exe string, p Policy) (release func(), err error) {
	return nil, errors.New("agentd has no sandbox for " + runtime.GOOS)
}

// RunHelper is never the helper on this platform.
func RunHelper(args []string) (bool, error) {
	if len(args) >= 2 && args[1] == HelperArg {
		return true, errors.New("agentd has no sandbox for " + runtime.GOOS)
	}
	return false, nil
}
