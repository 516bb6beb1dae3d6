//go:build unix

package main

import (
	"os"
	"syscall"
)

// pageFaults is the page faults of an ended process's whole life, where the system counts them.
func pageFaults(st *os.ProcessState) (int, bool) {
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return int(ru.Minflt + ru.Majflt), true
}
