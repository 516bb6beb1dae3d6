//go:build !linux

package term

import "os"

// IsTerminal reports whether f is a character device; /dev/null counts as one here, so pass
// --mode auto (or close stdin) for unattended runs on these systems.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
