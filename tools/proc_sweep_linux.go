package tools

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

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
//
// It runs at every exit, `agentd --version` included, so it asks the kernel instead of reading
// every process's /proc/PID/stat (18 % of a --version run's CPU on a busy machine): one waitid
// says whether there is any child at all, and /proc/self/task/*/children lists them where the
// kernel has CONFIG_PROC_CHILDREN; without it, the scan of /proc remains.
func killAdopted() {
	if !subreaper.Load() || !hasChildren() {
		return
	}
	self := os.Getpid()
	if _, err := os.Stat(childrenFile(self)); err != nil {
		killMatching(childOf(strconv.Itoa(self)))
		return
	}
	for range 10 {
		var killed []int
		for _, pid := range ownChildren() {
			if !zombie(pid) && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = append(killed, pid)
			}
		}
		if len(killed) == 0 {
			return
		}
		// A pass takes microseconds, a killed process longer to exit; what it leaves is ours
		// once it is a zombie (the kernel reparents before), so the next pass waits for that.
		waitZombies(killed, time.Now().Add(time.Second))
	}
}

// waitZombies waits until every process in pids has exited (or deadline passes: a process stuck
// in the kernel must not hold agentd's exit).
func waitZombies(pids []int, deadline time.Time) {
	for _, pid := range pids {
		for !zombie(pid) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Microsecond)
		}
	}
}

// hasChildren reports whether this process has a child, running or exited: waitid with WNOWAIT
// reaps nothing, so a program's own Wait still gets its status.
func hasChildren() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WSTOPPED|unix.WCONTINUED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != unix.ECHILD
}

// childrenFile is the kernel's list of the children of thread tid of this process.
func childrenFile(tid int) string {
	return "/proc/self/task/" + strconv.Itoa(tid) + "/children"
}

// ownChildren lists the children of every thread of this process (a child belongs to the thread
// that forked it, an adopted orphan to the thread the kernel picked), zombies included.
func ownChildren() []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	var pids []int
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(childrenFile(tid)) // a thread that exited meanwhile: its children moved to another
		if err != nil {
			continue
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// zombie reports whether process pid has exited and waits to be reaped (killing it again would
// "succeed" for ever); a process already gone counts as one.
func zombie(pid int) bool {
	state, _, ok := statFields("/proc/" + strconv.Itoa(pid))
	return !ok || state == "Z"
}

// childOf matches the /proc directory of a live (not zombie) child of process parent: the scan
// killAdopted falls back to when the kernel has no children files.
func childOf(parent string) func(dir string) bool {
	return func(dir string) bool {
		state, ppid, ok := statFields(dir)
		return ok && state != "Z" && ppid == parent
	}
}

// statFields reads the state and parent pid from dir/stat.
func statFields(dir string) (state, ppid string, ok bool) {
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return "", "", false
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last
	// ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", "", false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 2 {
		return "", "", false
	}
	return string(f[0]), string(f[1]), true
}
