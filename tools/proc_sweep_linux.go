package tools

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// sweepTagged kills every process of ours whose environment carries the run's tag: what a
// program started and moved out of its process group (setsid, a daemon's double fork), which
// killGroup cannot reach. A process that rewrote its environment escapes. It sweeps until a
// pass finds nothing, so a child forked while the last pass ran is found by the next.
func sweepTagged(token string) {
	tag := []byte(runTagVar + "=" + token + "\x00")
	self := os.Getpid()
	for range 10 {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := false
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			environ, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !(bytes.HasPrefix(environ, tag) || bytes.Contains(environ, append([]byte{0}, tag...))) {
				continue
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				found = true
			}
		}
		if !found {
			return
		}
	}
}
