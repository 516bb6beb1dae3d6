//go:build !unix

package main

import "os"

// pageFaults is not counted where getrusage does not exist.
func pageFaults(*os.ProcessState) (int, bool) { return 0, false }
