package tools

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// sweepTagged kills every process of ours whose environment carries the run's tag: what a
// program started and moved out of its process group (setsid, a daemon's double fork), which
// killGroup cannot reach. A process that rewrote its environment escapes. It sweeps until a
// pass finds nothing, so a child forked while the last pass ran is found by the next.
func sweepTagged(token string) {
	tag := []byte(runTagVar + "=" + token + "\x00")
	killMatching(func(dir string) bool {
		environ, err := os.ReadFile(dir + "/environ")
		return err == nil && (bytes.HasPrefix(environ, tag) || bytes.Contains(environ, append([]byte{0}, tag...)))
	})
}

// killMatching sends SIGKILL to every process but this one whose /proc directory match accepts,
// and sweeps again until a pass kills nothing (at most 10 passes), so that a child forked or
// reparented while a pass ran is found by the next.
func killMatching(match func(dir string) bool) {
	self := os.Getpid()
	for range 10 {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := false
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self || !match("/proc/"+e.Name()) {
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

// subreaper is set once BecomeSubreaper succeeded.
var subreaper atomic.Bool

// BecomeSubreaper makes this process a child subreaper (PR_SET_CHILD_SUBREAPER): an orphan
// among its descendants (a program's background child whose parent exited, setsid or not)
// becomes its child instead of init's, so killAdopted finds it when agentd exits however it
// escaped the group and the tag. Only the binary's main calls it: it changes the whole process.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	subreaper.Store(true)
	return nil
}

// killAdopted kills every live child of this process, once it is a subreaper: the programs
// still running and the orphans it adopted. What a killed child leaves becomes our child in
// turn, so it repeats until a pass finds nothing alive.
func killAdopted() {
	if !subreaper.Load() {
		return
	}
	self := strconv.Itoa(os.Getpid())
	killMatching(func(dir string) bool {
		stat, err := os.ReadFile(dir + "/stat")
		if err != nil {
			return false
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the
		// last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			return false
		}
		f := bytes.Fields(stat[i+1:])
		return len(f) >= 2 && string(f[0]) != "Z" && string(f[1]) == self
	})
}
