package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"sync"
)

var (
	probeOnce sync.Once
	probed    Status
)

// probe starts /usr/bin/true under the smallest profile: sandbox-exec is missing on a stripped
// system and refuses inside a process that is already sandboxed.
func probe() Status {
	cmd := exec.Command(SeatbeltExec, "-p", "(version 1)(allow default)", "/usr/bin/true")
	if err := cmd.Run(); err != nil {
		return Status{Reason: "macOS's sandbox-exec cannot confine a program here (" + err.Error() + ")"}
	}
	return Status{Available: true, Seatbelt: true}
}

// Wrap turns cmd into a start of sandbox-exec with p's profile (seatbelt.go), which then
// executes what cmd would have run. exe (agentd's helper) is not needed on macOS. release has
// nothing to undo: the profile's rules need no placeholder.
func Wrap(cmd *exec.Cmd, exe string, p Policy) (release func(), err error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	args, err := seatbeltArgs(p)
	if err != nil {
		return nil, err
	}
	prog := cmd.Path
	cmd.Args = append(append(append([]string{SeatbeltExec}, args...), prog), cmd.Args[1:]...)
	cmd.Path = SeatbeltExec
	if p.TempDir != "" {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, "TMPDIR="+p.TempDir)
	}
	return func() {}, nil
}

// RunHelper is never the helper on macOS: sandbox-exec applies the profile.
func RunHelper(args []string) (bool, error) {
	if len(args) >= 2 && args[1] == HelperArg {
		return true, errors.New("agentd's sandbox helper is not used on macOS")
	}
	return false, nil
}
