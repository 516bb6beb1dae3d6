//go:build windows

package main

import "os"

// stdio returns the protocol's input and output. On Windows a pending read on a pipe is not
// interrupted by Close; the daemon exits with os.Exit after Serve returns, which ends it.
func stdio() (*os.File, *os.File) { return os.Stdin, os.Stdout }
