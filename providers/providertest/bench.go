package providertest

import (
	"runtime"
	"testing"
)

// BenchPerDelta runs decode b.N times and reports the cost per delta: wall ns/delta, and on
// Linux cpu-ns/delta (the benchmark thread's CPU time, which stays meaningful on a loaded
// machine where wall time is mostly waiting for a core) and allocs/delta.
func BenchPerDelta(b *testing.B, deltas int, decode func()) {
	b.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	cpu0, cpuOK := threadCPU()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		decode()
		n++
	}
	b.StopTimer()
	cpu1, _ := threadCPU()
	runtime.ReadMemStats(&ms1)
	total := float64(n * deltas)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/delta")
	if cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/total, "cpu-ns/delta")
	}
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/total, "allocs/delta")
}
