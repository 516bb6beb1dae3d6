package session

// growStack gives the calling goroutine a 32 KB stack in one step, while its stack is shallow.
// A goroutine starts on a small stack and the runtime doubles it each time a call runs past its
// end, copying the stack and adjusting every frame on it. The goroutine that runs a response's
// calls went through three such growths every turn, deep in the tool, the bridge and the update
// encoder (a uprobe on runtime.newstack over 40 warm turns: 2.6 to 3 a turn; with this, 1, at the
// goroutine's first frame, where the copy is a few bytes). CockroachDB's util/growstack does the
// same for its busiest goroutines.
//
//go:noinline
func growStack() {
	var frame [16 << 10]byte
	keepFrame(frame[:])
}

//go:noinline
func keepFrame(b []byte) { b[0] = 0 }
