//go:build !linux

package tools

// sweepTagged needs /proc to find a run's processes by their environment; elsewhere what left
// the program's process group (setsid) is not found.
func sweepTagged(string) {}

// BecomeSubreaper is Linux's; elsewhere an orphan goes to init and is not found.
func BecomeSubreaper() error { return nil }

func killAdopted() {}
