package tools

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a tool leaves a goroutine behind (a search worker, a program's
// output copier, a bridge connection).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
