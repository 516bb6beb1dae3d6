package session

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind: a turn, a provider stream or
// a permission request that outlives its session.
//
// Managers that name no StateKeyFile keep their key under XDG_CONFIG_HOME: point it at a
// directory of the package's own, never the user's.
func TestMain(m *testing.M) {
	if dir, err := os.MkdirTemp("", "agentd-session-config-"); err == nil {
		os.Setenv("XDG_CONFIG_HOME", dir)
		defer os.RemoveAll(dir)
	}
	goleak.VerifyTestMain(m)
}
