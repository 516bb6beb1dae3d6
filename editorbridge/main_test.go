package editorbridge_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: the update queue's drainer
// and both ends of every connection must be gone when a test ends.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
