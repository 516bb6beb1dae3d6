// Package stack grows the main goroutine's stack to 32 KB before the package inits run on it.
// Only cmd/agentd imports it, for that side effect.
//
// The package inits run on the main goroutine, which starts on the runtime's smallest stack: it
// grew four times before main (internal/godebug's init, a few inits with large frames, net/netip's
// unique handles), and each growth copies the stack and looks up every frame's stack maps in
// the binary's pclntab, a 64 KB window of it made resident per lookup that lands in a new one
// (internal/growstack). Grown here, where the stack is three frames, the inits that follow run
// without a growth.
//
// Why a package of its own, and why it imports nothing but growstack: Go runs the first
// package, by import path, whose imports are initialized. This one needs only growstack (no
// imports, no init), so it runs right after the runtime's own, before internal/godebug; a
// package that imports os or strings (as cmd/agentd/internal/early does) runs after them.
// internal/inittest's TestStackGrownFirst holds this.
package stack

import "github.com/agentd-dev/agentd/internal/growstack"

func init() { growstack.To32K() }
