//go:build agentd_cpuprofile

// A build for profiling only (go build -tags agentd_cpuprofile): with AGENTD_CPUPROFILE=FILE the
// daemon writes a CPU profile of its first AGENTD_CPUPROFILE_SECONDS (default 30) to FILE, so a
// benchmark that drives the real binary (internal/test/acceptance, bench/e2e) can say where agentd's
// own time goes. Release builds do not have it.

package main

import (
	"os"
	"runtime/pprof"
	"strconv"
	"time"
)

func init() {
	path := os.Getenv("AGENTD_CPUPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		os.Stderr.WriteString("agentd: AGENTD_CPUPROFILE: " + err.Error() + "\n")
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		os.Stderr.WriteString("agentd: AGENTD_CPUPROFILE: " + err.Error() + "\n")
		return
	}
	secs, _ := strconv.Atoi(os.Getenv("AGENTD_CPUPROFILE_SECONDS"))
	if secs <= 0 {
		secs = 30
	}
	time.AfterFunc(time.Duration(secs)*time.Second, func() {
		pprof.StopCPUProfile()
		f.Close()
	})
}
