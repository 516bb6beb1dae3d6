//go:build !windows

package rpc

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid names a running process (signal 0 probes without sending).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
