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
			stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after
			// the last ')'.
			i := bytes.LastIndexByte(stat, ')')
			if i < 0 {
				continue
			}
			f := bytes.Fields(stat[i+1:])
			if len(f) < 2 || string(f[0]) == "Z" || string(f[1]) != strconv.Itoa(self) {
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
