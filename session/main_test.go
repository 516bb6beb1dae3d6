package session

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind: a turn, a provider stream or
// a permission request that outlives its session.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
