//go:build unix

package prompts

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU adds cpu-ns/op, the process's CPU time (user and system) per operation, beside the
// wall time: on a loaded machine wall time counts the time other processes held the cores.
func reportCPU(b *testing.B) func() {
	before := cpuTime()
	return func() { b.ReportMetric(float64((cpuTime()-before).Nanoseconds())/float64(b.N), "cpu-ns/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
