// Package cpus is the daemon's scheduler policy: one P (GOMAXPROCS=1) by default, and the CPU
// count for as long as a tool that really computes in parallel holds a lease.
//
// Why. What the daemon does for a turn is hand-offs between a few goroutines: the stdin reader,
// the handler, the HTTP client's loops, the ordered writer. With more than one P, every goroutine
// made ready wakes a second thread to run it, and on a paravirtualized VM a thread wake-up costs
// ~26 µs; the runtime's monitor thread (sysmon) also polls every 20 µs for as long as a second P
// runs. Measured end to end (bench/e2e, docs/benchmarks.md "Two-call turn CPU, fourth pass"),
// one P cut a warm two-call turn's CPU by about a third and its context switches by half. The
// tools that spread work over the cores (the search engine behind search_text and find_symbol,
// ctags filtering, the semantic index's scan) take a Lease around that work, so they keep every
// core; the last lease to end lowers GOMAXPROCS again.
//
// A GOMAXPROCS in the environment wins: Default then changes nothing and leases do nothing, as
// in tests and in any program that never calls Default.
package cpus

import (
	"os"
	"runtime"
	"strconv"
	"sync"
)

// policy is the lease count and the two settings it moves between; set changes GOMAXPROCS.
type policy struct {
	mu     sync.Mutex
	low    int // 0 until the policy is on: leases change nothing
	high   int
	leases int
	set    func(int)
}

var std = policy{set: func(n int) { runtime.GOMAXPROCS(n) }}

// Default puts the process on one P unless the environment sets GOMAXPROCS (a positive number,
// as the runtime reads it), remembering the runtime's own choice (the CPUs this process may
// use) for leases. Call it once, before the heavier package inits (cmd/agentd/internal/early
// says why); tests that run the daemon in-process keep the runtime's setting.
func Default() {
	if n, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); err == nil && n > 0 {
		return
	}
	std.start(runtime.GOMAXPROCS(0))
}

// Start puts the process on one P whatever the environment says, and returns what gives it back
// the runtime's setting. It is for benchmarks and tests of leased work, which run without main:
// call stop once every lease has ended.
func Start() (stop func()) {
	high := runtime.GOMAXPROCS(0)
	std.start(high)
	return func() {
		std.mu.Lock()
		defer std.mu.Unlock()
		std.low, std.high = 0, 0
		std.set(high)
	}
}

func (p *policy) start(high int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if high <= 1 || p.low != 0 {
		return // one CPU, or started already
	}
	p.low, p.high = 1, high
	if p.leases == 0 {
		p.set(p.low)
	}
}

// Lease gives the process every CPU it may use until release is called; release is idempotent.
// Leases nest and overlap: GOMAXPROCS goes up with the first and down when the last ends. Take
// one around work split over runtime.GOMAXPROCS(0) workers, and read that number after it.
// Changing GOMAXPROCS stops the world for a moment (tens of µs), so lease work that runs for
// milliseconds, not each small step.
func Lease() (release func()) { return std.lease() }

func (p *policy) lease() func() {
	p.mu.Lock()
	p.leases++
	if p.leases == 1 && p.low != 0 {
		p.set(p.high)
	}
	p.mu.Unlock()
	var once sync.Once
	return func() { once.Do(p.release) }
}

func (p *policy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.leases--
	if p.leases == 0 && p.low != 0 {
		p.set(p.low)
	}
}
