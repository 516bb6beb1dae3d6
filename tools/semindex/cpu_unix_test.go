//go:build unix

package semindex

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time so far: on the shared, loaded build machine
// wall time says more about the neighbours than about the code, CPU time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
