package tools

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a tool leaves a goroutine behind (a search worker, a program's
// output copier, a bridge connection). The scale benchmarks' generated project is removed as
// the binary exits.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { cleanupScale() }))
}
