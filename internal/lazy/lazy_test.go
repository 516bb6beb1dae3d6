package lazy

import (
	"sync"
	"testing"
)

func TestGetBuildsOnce(t *testing.T) {
	var v Value[*int]
	calls := 0
	build := func() *int { calls++; n := 42; return &n }
	var wg sync.WaitGroup
	got := make([]*int, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = v.Get(build) }()
	}
	wg.Wait()
	if calls != 1 {
		t.Fatalf("build ran %d times, want 1", calls)
	}
	for _, p := range got {
		if p != got[0] || *p != 42 {
			t.Fatalf("Get returned %v and %v, want one value 42", p, got[0])
		}
	}
	if v.Get(func() *int { t.Fatal("build called again"); return nil }) != got[0] {
		t.Fatal("a later Get returned another value")
	}
}

func TestZeroValueHasNoValueYet(t *testing.T) {
	var v Value[string]
	if got := v.Get(func() string { return "made" }); got != "made" {
		t.Fatalf("Get = %q, want the built value", got)
	}
}
