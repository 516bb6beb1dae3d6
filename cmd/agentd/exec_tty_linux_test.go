package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns a pseudo-terminal: what is written to master is typed on slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// TestExecOnATerminalAsksUntilAnsweredAndRejects is the new user's path: Enter alone and a word
// are not answers, "4" rejects, and the demo then says the fix was not applied.
func TestExecOnATerminalAsksUntilAnsweredAndRejects(t *testing.T) {
	execEnv(t)
	master, slave := openPTY(t)
	if _, err := master.WriteString("\nyes\n4\n"); err != nil {
		t.Fatal(err)
	}
	code, out, errs, dir := runDemoOn(t, slave)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{
		"Permission needed: Edit stats.go",
		"Choose 1-5: Type the number of an option (Enter alone chooses nothing). Choose 1-5: ",
		`"yes" is not an option. Choose 1-5: `,
		"✗ Edit stats.go: permission denied: The user rejected this call.",
		"The edit was not applied",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "Choose 1-5: ") != 3 || strings.Contains(out, "It now ranges") {
		t.Errorf("asked %d times, or claimed the fix:\n%s", strings.Count(out, "Choose 1-5: "), out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "stats.go")); !strings.Contains(string(b), "for i := 1;") {
		t.Fatal("the file was edited although the answer was Reject")
	}
}

func TestExecOnATerminalAllowsOnce(t *testing.T) {
	execEnv(t)
	master, slave := openPTY(t)
	if _, err := master.WriteString("1\n"); err != nil {
		t.Fatal(err)
	}
	code, out, errs, dir := runDemoOn(t, slave)
	if code != exitOK || !strings.Contains(out, "✓ Edit stats.go") || !strings.Contains(out, "It now ranges") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "stats.go")); !strings.Contains(string(b), "for _, x := range xs {") {
		t.Fatal("the allowed edit was not applied")
	}
}

func TestDaemonOnATerminalSaysWhatItIs(t *testing.T) {
	_, slave := openPTY(t)
	var got bytes.Buffer
	terminalHint(slave, &got)
	for _, want := range []string{"JSON-RPC", "agentd exec --demo", "agentd --help"} {
		if !strings.Contains(got.String(), want) {
			t.Errorf("hint lacks %q:\n%s", want, got.String())
		}
	}
	// An editor's pipe gets nothing: the daemon's stderr is its log.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	got.Reset()
	terminalHint(r, &got)
	if got.Len() != 0 {
		t.Errorf("a pipe got the hint: %q", got.String())
	}
}
