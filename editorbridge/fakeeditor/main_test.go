package fakeeditor_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a scenario leaves a goroutine behind (a turn, a connection, the
// update queue, a child process's pipes).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
