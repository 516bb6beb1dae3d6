package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

var (
	probeOnce sync.Once
	probed    Status
)

// minABI is the oldest Landlock ABI agentd applies: 1 restricts the file system; what later
// versions add (TCP, scopes) is applied where the kernel has it, and seccomp covers the rest.
const minABI = 1

func probe() Status {
	var st Status
	if v, err := llsys.LandlockGetABIVersion(); err == nil {
		st.LandlockABI = v
	}
	st.Seccomp = seccomp.Supported()
	st.UserNamespaces = probeUserNS()
	switch {
	case st.LandlockABI < minABI:
		st.Reason = "the kernel has no Landlock (it is older than 5.13, or Landlock is not in the lsm= boot list)"
	case !st.Seccomp:
		st.Reason = "seccomp filters are not available in this kernel or container"
	case !st.UserNamespaces:
		st.Reason = "unprivileged user namespaces are turned off (needed to keep .git/hooks, .git/config and .agentd read-only)"
	default:
		st.Available = true
	}
	return st
}

// probeUserNS starts /bin/true in its own user and mount namespaces, as Wrap does.
func probeUserNS() bool {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	addNamespaces(cmd.SysProcAttr)
	return cmd.Run() == nil
}

func addNamespaces(a *syscall.SysProcAttr) {
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	uid, gid := os.Getuid(), os.Getgid()
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
}

// Wrap turns cmd into a start of the helper (exe, normally agentd's own os.Executable()) that
// applies p and then executes what cmd would have run. cmd's SysProcAttr is kept (a process
// group, say) and gains the namespaces. release, called once the program has ended (or was never
// started), removes the empty placeholders Wrap made for protected entries that did not exist.
func Wrap(cmd *exec.Cmd, exe string, p Policy) (release func(), err error) {
	enc, err := p.Encode()
	if err != nil {
		return nil, err
	}
	prog := cmd.Path
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	release, err = holdPlaceholders(clean(p.Roots))
	if err != nil {
		return nil, err
	}
	cmd.Args = append([]string{exe, HelperArg, enc, prog}, cmd.Args...)
	cmd.Path = exe
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	addNamespaces(cmd.SysProcAttr)
	if p.TempDir != "" {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, "TMPDIR="+p.TempDir)
	}
	return release, nil
}

// Placeholders. A protected entry that does not exist yet (a project without .agentd/, a
// repository without .git/hooks) cannot be bind-mounted, and Landlock's rights are inherited by
// the whole root, so the program could create it: .agentd/config.json or a hook that runs
// outside the sandbox later. Landlock cannot except a name, seccomp cannot see paths, and a mount
// needs an existing target; so agentd makes the missing directory, empty, for the program's
// time, the helper mounts it read-only, and the last program holding it removes it again
// (rmdir: only while it is empty, so nothing anyone put there since is lost). An empty
// directory is not shown by git.
var placeholders = struct {
	sync.Mutex
	held map[string]int
}{held: map[string]int{}}

// placeholderDirs are the protected directories that may be made when missing: .agentd always,
// .git/hooks only in a repository (a .git directory).
func placeholderDirs(root string) []string {
	out := []string{filepath.Join(root, ".agentd")}
	if fi, err := os.Lstat(filepath.Join(root, ".git")); err == nil && fi.IsDir() {
		out = append(out, filepath.Join(root, ".git", "hooks"))
	}
	return out
}

func holdPlaceholders(roots []string) (func(), error) {
	placeholders.Lock()
	defer placeholders.Unlock()
	var mine []string
	for _, r := range roots {
		for _, d := range placeholderDirs(r) {
			if _, ok := placeholders.held[d]; ok {
				placeholders.held[d]++
				mine = append(mine, d)
				continue
			}
			if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err := os.Mkdir(d, 0o755); err != nil {
				// Where agentd cannot make it (a read-only project), the program cannot either.
				if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS) {
					continue
				}
				releasePlaceholders(mine)
				return nil, fmt.Errorf("making the empty %s that keeps it read-only: %w", d, err)
			}
			placeholders.held[d] = 1
			mine = append(mine, d)
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			placeholders.Lock()
			defer placeholders.Unlock()
			releasePlaceholders(mine)
		})
	}, nil
}

// releasePlaceholders drops one hold on each of dirs; placeholders.mu is held.
func releasePlaceholders(dirs []string) {
	for _, d := range dirs {
		if placeholders.held[d]--; placeholders.held[d] > 0 {
			continue
		}
		delete(placeholders.held, d)
		os.Remove(d) // fails, and keeps it, when it is not empty
	}
}

// RunHelper is the helper's whole life: when args (os.Args) name the helper it applies the
// policy to itself and executes the program, returning only on failure (the caller prints the
// error and exits 126); ok is false when args are not the helper's. main calls it first thing.
func RunHelper(args []string) (ok bool, err error) {
	if len(args) < 5 || args[1] != HelperArg {
		return false, nil
	}
	p, err := decodePolicy(args[2])
	if err != nil {
		return true, err
	}
	prog, argv := args[3], args[4:]
	parent := os.Getppid()
	if err := apply(p); err != nil {
		return true, fmt.Errorf("agentd sandbox: %w; the program was not run", err)
	}
	// The program dies with agentd (even by SIGKILL). The parent-death signal agentd asked for
	// (SysProcAttr.Pdeathsig) belongs to the thread it was set on, the helper's first; Go may run
	// this on another thread, and execve keeps the calling thread as the process, dropping the
	// setting (1 start in 6 lost it). So it is set again on the thread that executes the
	// program, and the parent checked once more after it.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return true, fmt.Errorf("agentd sandbox: setting the parent-death signal: %w; the program was not run", err)
	}
	if os.Getppid() != parent {
		return true, errors.New("agentd sandbox: agentd exited before the program started; it was not run")
	}
	return true, syscall.Exec(prog, argv, os.Environ())
}

func apply(p Policy) error {
	roots, writable := clean(p.Roots), clean(append(append([]string{}, p.Writable...), p.TempDir))
	deny := clean(p.Deny)
	if err := protect(roots); err != nil {
		return err
	}
	st := probed
	if st.LandlockABI == 0 {
		if v, err := llsys.LandlockGetABIVersion(); err == nil {
			st.LandlockABI = v
		}
	}
	var rules []landlock.Rule
	add := func(r landlock.Rule) { rules = append(rules, r) }
	// Read: everything except deny. Landlock only allows, so deny is what no rule covers: the
	// siblings of each denied path (and of its ancestors) are allowed one by one.
	// An entry that vanished since it was listed (another program's temporary directory) has
	// nothing left to read: its rule is skipped.
	cover("/", deny, func(path string, dir bool) {
		if dir {
			add(landlock.RODirs(path).IgnoreIfMissing())
		} else {
			add(landlock.ROFiles(path).IgnoreIfMissing())
		}
	})
	// Write: the roots, writable and the temporary directory, except deny below them.
	// Refer lets a program rename within them; a rename or link from outside still needs
	// write rights on the source's directory, which nothing outside has.
	cover2 := func(dirs []string) {
		for _, d := range dirs {
			cover(d, deny, func(path string, dir bool) {
				if dir {
					add(landlock.RWDirs(path).WithRefer().WithIoctlDev().WithResolveUnix().IgnoreIfMissing())
				} else {
					add(landlock.RWFiles(path).IgnoreIfMissing())
				}
			})
		}
	}
	cover2(roots)
	cover2(writable)
	add(landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty").IgnoreIfMissing())
	cfg := landlock.V11.BestEffort()
	if p.Network {
		cfg.HandledAccessNet = 0
	}
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if err := seccomp.LoadFilter(filter(p, st.LandlockABI)); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// cover calls add for what lies under dir except the paths in except: dir itself when nothing
// below it is excepted, else each entry of it, recursively. A symbolic link is covered through
// its target, and skipped when that target is, holds or lies under an excepted path.
func cover(dir string, except []string, add func(path string, dir bool)) {
	if slices.ContainsFunc(except, func(e string) bool { return within(dir, e) }) {
		return
	}
	if !slices.ContainsFunc(except, func(e string) bool { return within(e, dir) }) {
		add(dir, true)
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			t, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			if slices.ContainsFunc(except, func(x string) bool { return within(t, x) || within(x, t) }) {
				continue
			}
			fi, err := os.Stat(t)
			if err != nil {
				continue
			}
			add(t, fi.IsDir())
			continue
		}
		switch {
		case slices.ContainsFunc(except, func(x string) bool { return within(p, x) }):
		case e.IsDir():
			cover(p, except, add)
		default:
			add(p, false)
		}
	}
}

// protect makes the protected entries of each root read-only with bind mounts in the helper's
// own mount namespace (Wrap gave it one); Landlock then forbids changing mounts.
func protect(roots []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("mount namespace: %w", err)
	}
	for _, r := range roots {
		// .git itself is made a mount point (writable, for git's own work in the sandbox) so that
		// it cannot be renamed or removed and replaced by a directory whose config and hooks are
		// the program's; a .git file (a linked worktree's pointer to its repository) is read-only.
		git := filepath.Join(r, ".git")
		if fi, err := os.Lstat(git); err == nil {
			switch {
			case fi.IsDir():
				if err := unix.Mount(git, git, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
					return fmt.Errorf("pinning %s: %w", git, err)
				}
			case fi.Mode().IsRegular():
				if err := readOnly(git); err != nil {
					return fmt.Errorf("keeping %s read-only: %w", git, err)
				}
			}
		}
		for _, rel := range Protected {
			p := filepath.Join(r, rel)
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			if err := readOnly(p); err != nil {
				return fmt.Errorf("keeping %s read-only: %w", p, err)
			}
		}
	}
	return nil
}

func readOnly(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	var sf unix.Statfs_t
	if err := unix.Statfs(p, &sf); err != nil {
		return err
	}
	// A remount in a user namespace must keep the flags the mount was locked with.
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for st, ms := range map[int64]uintptr{unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV, unix.ST_NOEXEC: unix.MS_NOEXEC, unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME, unix.ST_RELATIME: unix.MS_RELATIME} {
		if sf.Flags&st != 0 {
			flags |= ms
		}
	}
	return unix.Mount("", p, "", flags, "")
}

// filter is the seccomp layer: what Landlock cannot say. Denied calls fail with EPERM.
func filter(p Policy, abi int) seccomp.Filter {
	deny := []string{
		// Reading or steering another process (agentd included); Landlock already refuses
		// ptrace outside the sandbox, this is the second lock.
		"ptrace", "process_vm_readv", "process_vm_writev",
		// io_uring can open sockets and files without the system calls filtered here.
		"io_uring_setup", "io_uring_enter", "io_uring_register",
		// Namespaces and mounts: no new user namespace to regain capabilities in.
		"unshare", "setns", "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsmount",
		"bpf", "perf_event_open", "keyctl", "add_key", "request_key",
	}
	var socketConds []seccomp.NameWithConditions
	ne := func(v uint64) seccomp.Condition {
		return seccomp.Condition{Argument: 0, Operation: seccomp.NotEqual, Value: v}
	}
	// Before Landlock ABI 9 a pathname Unix socket (docker.sock, ssh-agent, the session bus)
	// can be connected to whatever the file rules say, so no Unix socket can be made at all;
	// socketpair(2) still works.
	unixOK := abi >= 9
	var allowed []uint64
	if unixOK {
		allowed = append(allowed, unix.AF_UNIX)
	}
	if p.Network {
		allowed = append(allowed, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK)
	}
	if len(allowed) == 0 {
		deny = append(deny, "socket")
	} else {
		var conds seccomp.ArgumentConditions
		for _, a := range allowed {
			conds = append(conds, ne(a))
		}
		socketConds = append(socketConds, seccomp.NameWithConditions{Name: "socket", Conditions: conds})
	}
	groups := []seccomp.SyscallGroup{{Names: deny, Action: seccomp.ActionErrno}}
	if len(socketConds) > 0 {
		groups = append(groups, seccomp.SyscallGroup{NamesWithCondtions: socketConds, Action: seccomp.ActionErrno})
	}
	return seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy:     seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups},
	}
}
