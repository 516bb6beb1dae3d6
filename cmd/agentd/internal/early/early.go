// Package early puts the daemon on one P (internal/cpus.Default) from a package init, before
// most of the binary's package inits run, instead of first thing in main. Only cmd/agentd
// imports it, for that side effect.
//
// Why an init. Lowering GOMAXPROCS destroys the second P, and every span cached in its mcache
// goes back onto its size class's central lists, whose blocks are allocated on first use: about
// one fresh page per size class. By the time main runs, the package inits (about 270 KB in
// 1,900 allocations) have usually run on the second P (the main goroutine goes on with the P
// that readied it while the runtime started its GC workers), so the switch in main cost 50 to 90
// page faults at every start, about 1.5 ms on the benchmark VM. This package needs nothing but
// internal/cpus (os, runtime, strconv, sync), so Go's init order (the first package by import
// path whose imports are initialized) runs it before the dependencies whose inits allocate the
// most (encoding/gob, yaml, jsonschema-go: internal/inittest's TestOnePBeforeHeavyInits holds
// this), and the inits after it run on one P. An import of strings here, which waits for
// unicode's init, put it after encoding/gob.
package early

import (
	"os"

	"github.com/agentd-dev/agentd/internal/cpus"
)

func init() {
	if testBinary(os.Args[0]) {
		return // tests keep the runtime's setting: cmd/agentd's tests call run in-process
	}
	cpus.Default()
	// The package inits run on a stack grown to 32 KB before them: cmd/agentd/internal/stack.
}

// testBinary says whether the program is a test binary `go test` built (pkg.test).
func testBinary(arg0 string) bool {
	return hasSuffix(arg0, ".test") || hasSuffix(arg0, ".test.exe")
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}
