// Package sandbox owns the OS sandbox that run_program's programs run in: the policy (what a
// program may read, write and reach), the probe of what the platform supports, and the helper
// that applies the rules to itself and then executes the program. agentd itself is never
// restricted: it starts itself again as the helper (Wrap, then RunHelper at the top of main).
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// HelperArg is the hidden first argument that makes agentd the sandbox helper.
const HelperArg = "__agentd-sandbox-exec"

// Mode is the sandbox setting's mode.
const (
	ModeAuto     = "auto"
	ModeRequired = "required"
	ModeOff      = "off"
)

// Policy is what one program may do.
type Policy struct {
	// Roots are the session's roots: readable and writable, except Protected below them.
	Roots []string `json:"roots"`
	// Writable are further directories the program may write (setting sandbox.writable).
	Writable []string `json:"writable,omitempty"`
	// TempDir is the program's private temporary directory (TMPDIR).
	TempDir string `json:"tempDir,omitempty"`
	// Deny are paths the program may not read (nor write), wherever they are.
	Deny []string `json:"deny,omitempty"`
	// Network lets the program use the network (IP sockets of every kind).
	Network bool `json:"network,omitempty"`
}

// Protected are the entries under each root a program may read but never write: a hook or a
// config written there would run, or loosen agentd, outside the sandbox later.
var Protected = []string{".git/hooks", ".git/config", ".agentd"}

// DefaultDeny is the contract's default deny list, for a home directory and agentd's own config
// and state directories (each may be "", then skipped).
func DefaultDeny(home string, agentdDirs ...string) []string {
	var out []string
	for _, d := range agentdDirs {
		if d != "" {
			out = append(out, d)
		}
	}
	if home == "" {
		return out
	}
	for _, rel := range []string{".ssh", ".gnupg", ".aws", ".config/gcloud", ".kube", ".docker", ".netrc"} {
		out = append(out, filepath.Join(home, rel))
	}
	return out
}

// Status says whether the sandbox can be applied here and, when not, why in plain words.
type Status struct {
	Available bool
	// Reason is why it is not available ("" when it is).
	Reason string
	// Unsupported says agentd has no sandbox for this platform at all (Windows), as opposed to
	// one this machine cannot apply (an old kernel, a container without seccomp).
	Unsupported bool
	// LandlockABI is the kernel's Landlock ABI version (0: none).
	LandlockABI int
	// Seccomp reports whether seccomp filters can be loaded.
	Seccomp bool
	// UserNamespaces reports whether a program can be started in its own user and mount
	// namespaces (needed to keep .git/hooks, .git/config and .agentd read-only).
	UserNamespaces bool
	// Seatbelt reports whether macOS's sandbox-exec confines a program here.
	Seatbelt bool
}

// testUnavailableVar, when set to 1 in agentd's environment, makes the sandbox unavailable on
// purpose; tests use it to check that agentd fails closed. It can only take protection away
// (programs then ask), never add trust.
const testUnavailableVar = "AGENTD_TEST_SANDBOX_UNAVAILABLE"

// Probe reports what the platform supports. The answer is computed once.
func Probe() Status {
	probeOnce.Do(func() { probed = probe() })
	st := probed
	if os.Getenv(testUnavailableVar) == "1" {
		st.Available, st.Reason = false, "the sandbox was turned off for this test ("+testUnavailableVar+"=1)"
	}
	return st
}

var helper struct {
	sync.Mutex
	exe       string
	installed bool
}

// SetHelper records the executable that handles HelperArg (RunHelper at the top of its main):
// agentd's main calls it with its own os.Executable(). A process that never does (a test of a
// package, an embedder) has no helper: Helper says installed false. An exe of "" installs a
// helper that cannot be started (agentd could not find itself): the sandbox is then
// unavailable, not absent.
func SetHelper(exe string) {
	helper.Lock()
	helper.exe, helper.installed = exe, true
	helper.Unlock()
}

// Helper is the executable SetHelper recorded and whether it was called.
func Helper() (exe string, installed bool) {
	helper.Lock()
	defer helper.Unlock()
	return helper.exe, helper.installed
}

// Encode is how a policy travels to the helper (one argument).
func (p Policy) Encode() (string, error) {
	b, err := json.Marshal(p)
	return string(b), err
}

func decodePolicy(s string) (Policy, error) {
	var p Policy
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return p, fmt.Errorf("bad sandbox policy: %w", err)
	}
	if len(p.Roots) == 0 {
		return p, errors.New("bad sandbox policy: no roots")
	}
	for _, list := range [][]string{p.Roots, p.Writable, p.Deny, {p.TempDir}} {
		for _, d := range list {
			if d != "" && !filepath.IsAbs(d) {
				return p, fmt.Errorf("bad sandbox policy: %q is not an absolute path", d)
			}
		}
	}
	return p, nil
}

// clean resolves symbolic links in each path that exists (a rule on a link would land on its
// target anyway, and a deny must name what the kernel sees) and drops duplicates.
func clean(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		p = filepath.Clean(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
