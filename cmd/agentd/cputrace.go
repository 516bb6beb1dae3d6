//go:build agentd_cpuprofile

package main

// With AGENTD_TRACE=FILE the profiling build also writes an execution trace (runtime/trace) of
// its first AGENTD_TRACE_SECONDS (default 30) to FILE: where a request's time goes between the
// goroutines, the scheduler and the system calls, which a CPU profile does not show (time spent
// runnable but not running, or waiting for the kernel to wake a thread, costs no CPU).

import (
	"os"
	"runtime/trace"
	"strconv"
	"time"
)

func init() {
	path := os.Getenv("AGENTD_TRACE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		os.Stderr.WriteString("agentd: AGENTD_TRACE: " + err.Error() + "\n")
		return
	}
	if err := trace.Start(f); err != nil {
		os.Stderr.WriteString("agentd: AGENTD_TRACE: " + err.Error() + "\n")
		return
	}
	secs, _ := strconv.Atoi(os.Getenv("AGENTD_TRACE_SECONDS"))
	if secs <= 0 {
		secs = 30
	}
	time.AfterFunc(time.Duration(secs)*time.Second, func() {
		trace.Stop()
		f.Close()
	})
}
