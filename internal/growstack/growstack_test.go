package growstack

import (
	"testing"
	"unsafe"
)

// A stack growth copies the goroutine's stack elsewhere, so a local variable's address changes
// across a call that grew it. A chain of about half the promised size moves the stack of a fresh
// goroutine, and not that of one that grew its stack first.
func TestGrowGivesTheStackRoomAtOnce(t *testing.T) {
	for _, c := range []struct {
		name  string
		grow  func()
		depth int // frames of recurse, ~100 bytes each
	}{
		{"To16K", To16K, 80},
		{"To32K", To32K, 200},
	} {
		for _, grown := range []bool{false, true} {
			moved := make(chan bool)
			go func() {
				if grown {
					c.grow()
				}
				var x byte
				before := uintptr(unsafe.Pointer(&x))
				recurse(c.depth)
				moved <- uintptr(unsafe.Pointer(&x)) != before
			}()
			if got := <-moved; got == grown {
				t.Errorf("%s called: %v; a chain of %d frames moved the stack: %v", c.name, grown, c.depth, got)
			}
		}
	}
}

//go:noinline
func recurse(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return recurse(n-1) + int(pad[n%64])
}
