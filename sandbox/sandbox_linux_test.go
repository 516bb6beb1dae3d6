package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestMain(m *testing.M) {
	if ok, err := RunHelper(os.Args); ok {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(126)
	}
	os.Exit(m.Run())
}

type world struct {
	root, outside, home, tmp string
	policy                   Policy
}

func newWorld(t *testing.T) *world {
	t.Helper()
	if st := Probe(); !st.Available {
		t.Skipf("sandbox not available here: %s", st.Reason)
	}
	base := t.TempDir()
	w := &world{root: filepath.Join(base, "proj"), outside: filepath.Join(base, "outside"), home: filepath.Join(base, "home"), tmp: filepath.Join(base, "tmp")}
	for _, d := range []string{w.root, w.outside, w.tmp, filepath.Join(w.root, ".git", "hooks"), filepath.Join(w.root, ".agentd"), filepath.Join(w.home, ".ssh"), filepath.Join(w.home, "docs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(w.home, ".ssh", "id_ed25519"): "PRIVATE KEY",
		filepath.Join(w.home, ".netrc"):             "machine x password y",
		filepath.Join(w.home, "docs", "notes.txt"):  "notes",
		filepath.Join(w.outside, "secret.txt"):      "outside secret",
		filepath.Join(w.root, ".git", "config"):     "[core]\n",
		filepath.Join(w.root, "main.go"):            "package main\n",
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.policy = Policy{Roots: []string{w.root}, TempDir: w.tmp, Deny: DefaultDeny(w.home, w.outside)}
	return w
}

// sh runs script under the sandbox with /bin/sh in the project and returns its output and
// whether it exited 0.
func (w *world) sh(t *testing.T, p Policy, script string) (string, bool) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = w.root
	release, err := Wrap(cmd, exe, p)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	release()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 126 {
		t.Fatalf("the helper failed: %s", out)
	}
	return string(out), err == nil
}

func TestWritesStayInTheRoots(t *testing.T) {
	w := newWorld(t)
	if out, ok := w.sh(t, w.policy, `echo hi > new.txt && mkdir -p sub && echo x > sub/y && mv sub/y sub/z && echo t > "$TMPDIR/t" && cat main.go`); !ok {
		t.Fatalf("a write in the roots failed: %s", out)
	}
	if out, ok := w.sh(t, w.policy, `test "$TMPDIR" = "`+w.tmp+`"`); !ok {
		t.Fatalf("TMPDIR is not the private temp dir: %s", out)
	}
	if err := os.Symlink(w.outside, filepath.Join(w.root, "link")); err != nil {
		t.Fatal(err)
	}
	attacks := map[string]string{
		"absolute":       `echo x > ` + filepath.Join(w.outside, "a"),
		"dotdot":         `echo x > ../outside/b`,
		"symlink":        `echo x > link/c`,
		"hardlink":       `ln ` + filepath.Join(w.outside, "secret.txt") + ` hard`,
		"rename in":      `mv ` + filepath.Join(w.outside, "secret.txt") + ` stolen`,
		"home dotfile":   `echo x > ` + filepath.Join(w.home, ".bashrc"),
		"git hook":       `echo x > .git/hooks/pre-commit`,
		"git config":     `echo x >> .git/config`,
		"agentd dir":     `echo x > .agentd/config.json`,
		"unmount":        `umount .git/hooks`,
		"tmp of system":  `echo x > /tmp/agentd-sandbox-escape-` + filepath.Base(w.root),
		"remove protect": `rm -rf .git/hooks`,
	}
	for name, script := range attacks {
		if out, ok := w.sh(t, w.policy, script); ok {
			t.Errorf("%s: the write succeeded: %s", name, out)
		}
	}
	for _, p := range []string{filepath.Join(w.outside, "a"), filepath.Join(w.outside, "b"), filepath.Join(w.outside, "c"), filepath.Join(w.root, "hard"), filepath.Join(w.root, "stolen"), filepath.Join(w.home, ".bashrc"), filepath.Join(w.root, ".git", "hooks", "pre-commit"), filepath.Join(w.root, ".agentd", "config.json")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists after the attack", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.root, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
}

// A .agentd/ or .git/hooks that does not exist yet cannot be created by a program (it would hold
// agentd's settings or a hook that runs outside the sandbox later), .git cannot be swapped for a
// directory of the program's own, and a .git file (a linked worktree's) cannot be pointed
// elsewhere. Nothing is left behind in the project once the program ends.
func TestMissingProtectedEntriesCannotBeCreated(t *testing.T) {
	w := newWorld(t)
	for _, rel := range []string{".agentd", ".git/hooks"} {
		if err := os.RemoveAll(filepath.Join(w.root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	attacks := map[string]string{
		"new agentd dir":  `mkdir -p .agentd && echo x > .agentd/config.json`,
		"new agentd file": `echo x > .agentd`,
		"new hooks":       `mkdir -p .git/hooks && echo x > .git/hooks/pre-commit`,
		"swap .git":       `mv .git .git-old && mkdir .git && echo x > .git/config`,
		"remove .git":     `rm -rf .git && mkdir .git && echo x > .git/config`,
		"rename agentd":   `mv .agentd .agentd-old && mkdir .agentd && echo x > .agentd/config.json`,
	}
	for name, script := range attacks {
		if out, ok := w.sh(t, w.policy, script); ok {
			t.Errorf("%s: succeeded: %s", name, out)
		}
		for _, rel := range []string{".agentd", ".git/hooks", ".git-old", ".agentd-old"} {
			if _, err := os.Lstat(filepath.Join(w.root, rel)); err == nil {
				t.Errorf("%s: %s exists after the program", name, rel)
			}
		}
		if b, err := os.ReadFile(filepath.Join(w.root, ".git", "config")); err != nil || string(b) != "[core]\n" {
			t.Errorf("%s: .git/config = %q, %v", name, b, err)
		}
	}
	if out, ok := w.sh(t, w.policy, `echo ok > .git/index && echo hi > new.txt && cat .git/config`); !ok {
		t.Errorf("a write in .git or the root failed: %s", out)
	}
	// A linked worktree's .git is a file naming the repository; pointing it at a directory of the
	// program's own would give git that directory's config and hooks.
	os.RemoveAll(filepath.Join(w.root, ".git"))
	if err := os.WriteFile(filepath.Join(w.root, ".git"), []byte("gitdir: /elsewhere/.git/worktrees/proj\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, script := range map[string]string{"rewrite .git file": `echo "gitdir: evil" > .git`, "replace .git file": `rm -f .git && echo "gitdir: evil" > .git`, "hooks beside a .git file": `mkdir .agentd`} {
		if out, ok := w.sh(t, w.policy, script); ok {
			t.Errorf("%s: succeeded: %s", name, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.root, ".git")); string(b) != "gitdir: /elsewhere/.git/worktrees/proj\n" {
		t.Errorf("the .git file = %q", b)
	}
}

func TestDeniedFilesCannotBeRead(t *testing.T) {
	w := newWorld(t)
	if out, ok := w.sh(t, w.policy, `cat `+filepath.Join(w.home, "docs", "notes.txt")+` && cat /etc/hostname >/dev/null && ls /usr/include >/dev/null`); !ok {
		t.Fatalf("reading outside the deny list failed: %s", out)
	}
	if err := os.Symlink(filepath.Join(w.home, ".ssh"), filepath.Join(w.home, "sshlink")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(w.home, ".ssh", "id_ed25519"), filepath.Join(w.home, ".netrc"), filepath.Join(w.outside, "secret.txt"), filepath.Join(w.home, "sshlink", "id_ed25519")} {
		if out, ok := w.sh(t, w.policy, `cat `+p); ok || strings.Contains(out, "PRIVATE") || strings.Contains(out, "outside secret") || strings.Contains(out, "password") {
			t.Errorf("read %s: %s", p, out)
		}
	}
}

func TestNoNetworkUnlessAllowed(t *testing.T) {
	w := newWorld(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("reached\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	uconn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer uconn.Close()
	sock := filepath.Join(w.outside, "agent.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	exe, _ := os.Executable()
	probe := func(p Policy, what string) bool {
		cmd := exec.Command(exe, "-test.run=^TestProbeNet$")
		cmd.Env = append(os.Environ(), "SANDBOX_PROBE="+what)
		release, err := Wrap(cmd, exe, p)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 126 {
			t.Fatalf("the helper failed: %s", out)
		}
		return strings.Contains(string(out), "REACHED")
	}
	tcp := fmt.Sprintf("tcp 127.0.0.1:%d", port)
	udp := "udp " + uconn.LocalAddr().String()
	for _, what := range []string{tcp, udp, "unix " + sock, "bind 127.0.0.1:0", "raw"} {
		if probe(w.policy, what) {
			t.Errorf("%s succeeded with the network off", what)
		}
	}
	on := w.policy
	on.Network = true
	if !probe(on, tcp) {
		t.Errorf("tcp failed with the network on")
	}
	if probe(on, "unix "+sock) {
		t.Errorf("a Unix socket outside the roots was reached with the network on")
	}
}

// TestProbeNet is the program TestNoNetworkUnlessAllowed runs in the sandbox.
func TestProbeNet(t *testing.T) {
	what := os.Getenv("SANDBOX_PROBE")
	if what == "" {
		t.Skip("run by TestNoNetworkUnlessAllowed")
	}
	kind, addr, _ := strings.Cut(what, " ")
	var err error
	switch kind {
	case "bind":
		var l net.Listener
		if l, err = net.Listen("tcp4", addr); err == nil {
			l.Close()
		}
	case "raw":
		var fd int
		if fd, err = syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, 0); err == nil {
			syscall.Close(fd)
		}
	default:
		var c net.Conn
		if c, err = net.Dial(kind, addr); err == nil {
			if kind == "udp" {
				_, err = c.Write([]byte("x"))
			}
			c.Close()
		}
	}
	if err == nil {
		fmt.Println("REACHED")
	} else {
		fmt.Println("refused:", err)
	}
}

func TestCannotSignalOrTraceItsParent(t *testing.T) {
	w := newWorld(t)
	pid := fmt.Sprint(os.Getpid())
	if out, ok := w.sh(t, w.policy, `kill -0 `+pid); ok {
		t.Errorf("signalled the parent: %s", out)
	}
	if out, ok := w.sh(t, w.policy, `cat /proc/`+pid+`/environ`); ok {
		t.Errorf("read the parent's environment: %s", out)
	}
}
