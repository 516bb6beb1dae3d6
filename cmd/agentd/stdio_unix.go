//go:build !windows

package main

import (
	"os"
	"syscall"
)

// stdio returns the protocol's input and output. Input is fd 0 switched to non-blocking mode
// and wrapped afresh, so it is registered with the runtime poller and Close interrupts a
// pending Read (a blocking fd would keep the daemon alive while the editor holds the pipe
// open). Output is the real fd 1.
func stdio() (*os.File, *os.File) {
	in := os.Stdin
	if err := syscall.SetNonblock(0, true); err == nil {
		in = os.NewFile(0, "stdin")
	}
	return in, os.Stdout
}
