// Package growstack gives the calling goroutine a 16 or 32 KB stack in one step, while its stack
// is shallow.
//
// A goroutine starts on a small stack, and the runtime doubles it each time a call runs past its
// end: it copies the stack and, for every frame on it, looks up the function's stack maps in the
// binary's pclntab. Deep in a decoder or an init, those lookups touch the pclntab of every
// package on the stack, a 64 KB window of the binary each time the kernel maps one in: nine
// growths between agentd's start and its idle state on the ACP door (a uprobe on
// runtime.morestack) made about 28 windows resident, 1.7 MB (perf page-fault records;
// docs/benchmarks.md "Idle memory, fifth pass"). Grown at a goroutine's first frame, the copy is
// a few bytes and the lookups touch one or two windows. CockroachDB's util/growstack does the
// same for its busiest goroutines.
//
// Call one first thing in a goroutine that goes deep (an init chain, a request decoder). On a
// stack already that large it only clears its frame (8 or 16 KB, well under a microsecond). A
// larger stack than the goroutine needs is not free: 32 KB on every request's goroutine cost
// about 1.5 ms more start-up CPU than 16 KB in two runs, for little less memory.
package growstack

// To16K makes the calling goroutine's stack at least 16 KB: enough for a request's decoding.
//
//go:noinline
func To16K() {
	var frame [8 << 10]byte
	keep(frame[:])
}

// To32K makes the calling goroutine's stack at least 32 KB: for an init chain or a tool's call.
//
//go:noinline
func To32K() {
	var frame [16 << 10]byte
	keep(frame[:])
}

//go:noinline
func keep(b []byte) { b[0] = 0 }
