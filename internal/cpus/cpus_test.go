package cpus

import (
	"runtime"
	"slices"
	"sync"
	"testing"
)

// recorder is a policy whose settings are written down instead of applied.
func recorder() (*policy, *[]int) {
	var got []int
	return &policy{set: func(n int) { got = append(got, n) }}, &got
}

func TestLeaseRaisesAndTheLastReleaseLowers(t *testing.T) {
	p, got := recorder()
	p.start(4)
	a := p.lease()
	b := p.lease() // overlapping: already raised
	a()
	a() // a second release of the same lease counts once
	if want := []int{1, 4}; !slices.Equal(*got, want) {
		t.Fatalf("with one lease left, settings = %v, want %v", *got, want)
	}
	b()
	c := p.lease() // a new lease after the last ended raises again
	c()
	if want := []int{1, 4, 1, 4, 1}; !slices.Equal(*got, want) {
		t.Fatalf("settings = %v, want %v", *got, want)
	}
}

func TestLeasesChangeNothingWithoutThePolicy(t *testing.T) {
	p, got := recorder()
	p.lease()()
	p.start(1) // a single CPU: nothing to lower or raise
	p.lease()()
	if len(*got) != 0 {
		t.Fatalf("settings = %v, want none", *got)
	}
}

func TestStartDuringALeaseWaitsForItsEnd(t *testing.T) {
	p, got := recorder()
	release := p.lease()
	p.start(8)
	if len(*got) != 0 {
		t.Fatalf("start lowered GOMAXPROCS under a lease: %v", *got)
	}
	release()
	p.start(2) // a second start changes nothing
	if want := []int{1}; !slices.Equal(*got, want) {
		t.Fatalf("settings = %v, want %v", *got, want)
	}
}

// TestConcurrentLeasesEndLow: however leases interleave, settings alternate between raised and
// lowered, and the process is on one P once they have all ended.
func TestConcurrentLeasesEndLow(t *testing.T) {
	var (
		mu  sync.Mutex
		got []int
	)
	p := &policy{set: func(n int) { mu.Lock(); got = append(got, n); mu.Unlock() }}
	p.start(2)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				release := p.lease()
				release()
				release()
			}
		})
	}
	wg.Wait()
	if len(got) < 3 || got[len(got)-1] != 1 {
		t.Fatalf("settings end %v, want them to end at 1", got[max(0, len(got)-3):])
	}
	for i, n := range got {
		if want := []int{1, 2}[i%2]; n != want {
			t.Fatalf("setting %d = %d, want %d (raised and lowered in turn)", i, n, want)
		}
	}
	if p.leases != 0 {
		t.Fatalf("%d leases left", p.leases)
	}
}

// TestDefaultOnTheRuntime runs the policy on this process's own scheduler.
func TestDefaultOnTheRuntime(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	if before < 2 {
		t.Skip("needs GOMAXPROCS ≥ 2")
	}
	t.Cleanup(func() {
		std.mu.Lock()
		std.low, std.high = 0, 0
		std.mu.Unlock()
		runtime.GOMAXPROCS(before)
	})

	t.Setenv("GOMAXPROCS", "2")
	Default()
	if n := runtime.GOMAXPROCS(0); n != before || std.low != 0 {
		t.Fatalf("with GOMAXPROCS in the environment, Default set %d (policy on: %v)", n, std.low != 0)
	}

	t.Setenv("GOMAXPROCS", "")
	Default()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS = %d after Default, want 1", n)
	}
	release := Lease()
	if n := runtime.GOMAXPROCS(0); n != before {
		t.Fatalf("GOMAXPROCS = %d under a lease, want %d", n, before)
	}
	release()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS = %d after the lease, want 1", n)
	}
}

func TestStartAndStop(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	if before < 2 {
		t.Skip("needs GOMAXPROCS ≥ 2")
	}
	t.Setenv("GOMAXPROCS", "2") // Start does not ask the environment
	stop := Start()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		stop()
		t.Fatalf("GOMAXPROCS = %d after Start, want 1", n)
	}
	Lease()()
	stop()
	if n := runtime.GOMAXPROCS(0); n != before {
		t.Fatalf("GOMAXPROCS = %d after stop, want %d", n, before)
	}
	Lease()() // the policy is off again: a lease changes nothing
	if n := runtime.GOMAXPROCS(0); n != before {
		t.Fatalf("GOMAXPROCS = %d after a lease with the policy off, want %d", n, before)
	}
}
