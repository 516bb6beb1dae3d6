//go:build windows

package rpc

// processAlive cannot probe cheaply on Windows without a handle; the watchdog trusts the end
// of stdin there.
func processAlive(pid int) bool { return true }
