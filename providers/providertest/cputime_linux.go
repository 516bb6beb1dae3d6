//go:build linux

package providertest

import "golang.org/x/sys/unix"

// threadCPU is the CPU time the calling OS thread has used, in nanoseconds.
func threadCPU() (int64, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
