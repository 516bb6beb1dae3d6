package tools

import (
	"os/exec"
	"sync"
)

// running holds the programs running now and their run tags, so that what they started dies
// with agentd even when agentd exits before they do (KillLeftovers).
// Its map is made by the first track: a map literal here would be built by the package's init
// at every start.
var running struct {
	sync.Mutex
	m map[*exec.Cmd]string
}

func track(cmd *exec.Cmd, token string) {
	running.Lock()
	if running.m == nil {
		running.m = map[*exec.Cmd]string{}
	}
	running.m[cmd] = token
	running.Unlock()
}

func untrack(cmd *exec.Cmd) {
	running.Lock()
	delete(running.m, cmd)
	running.Unlock()
}

// KillLeftovers is for agentd's last moment (normal exit, end of input, SIGTERM or SIGINT): it
// kills the process group of every program still running and, where they can be found, what
// those programs moved out of their groups (sweepTagged), then, on Linux when BecomeSubreaper
// succeeded, every process agentd adopted: orphans of programs' background children that
// escaped both the group and the tag. It kills every child agentd has, so only the binary's
// main calls it.
func KillLeftovers() {
	running.Lock()
	left := make(map[*exec.Cmd]string, len(running.m))
	for cmd, token := range running.m {
		left[cmd] = token
	}
	running.Unlock()
	for cmd, token := range left {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		killGroup(cmd)
		sweepTagged(token)
	}
	killAdopted()
}
