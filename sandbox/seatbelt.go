package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The macOS sandbox is Seatbelt, through /usr/bin/sandbox-exec -p PROFILE: the program starts
// confined by a profile written in Apple's Sandbox Profile Language (SBPL). This file builds
// that profile; it is plain Go so that its text is tested on every platform (CI has no Mac).
//
// What the profile relies on, from the public descriptions of SBPL (Apple does not document it):
//   - "(deny default)" first, then allows: anything not allowed is refused (Chromium's
//     sandbox/policy/mac/common.sb, Codex's codex-rs/core/src/seatbelt_base_policy.sbpl).
//   - When several rules match an operation, the last one wins; a deny for a path inside an
//     allowed subtree must therefore come after the allow. Every deny here is written after
//     every allow of the same operation, which is also right where a deny would win anyway.
//   - sandbox-exec -D KEY=VALUE defines a parameter the profile reads with (param "KEY") (the
//     sandbox-exec(1) manual; Codex passes its writable roots this way). Every path goes in as a
//     parameter, never as text of the profile, so no path (a repository named with a quote, a
//     backslash, a parenthesis or a newline) can end a string and add a rule.
//   - Rules match the path the kernel resolved: /tmp is /private/tmp and /var is /private/var,
//     so every path is given with its symbolic links resolved (as far as it exists).

// SeatbeltExec is the only sandbox-exec agentd runs: never one found on PATH.
const SeatbeltExec = "/usr/bin/sandbox-exec"

// seatbeltBase is the fixed part of the profile: what any program needs to start and run, and
// nothing that reaches beyond the sandbox. The Mach services are the few libSystem needs (user
// and group lookup, notifications, logging); the others are refused, since a service such as
// Launch Services would start a program outside the sandbox.
const seatbeltBase = `(version 1)
; agentd's sandbox for one program (sandbox/seatbelt.go). Paths are parameters (-D).
(deny default)
(allow process-fork)
(allow process-exec)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow mach-host*)
(allow user-preference-read)
(allow ipc-posix-sem)
(allow pseudo-tty)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent"))
(allow file-read*)
(allow file-read* file-write-data file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/random")
  (literal "/dev/urandom")
  (literal "/dev/tty")
  (literal "/dev/ptmx")
  (regex #"^/dev/ttys[0-9]+$")
  (regex #"^/dev/fd/[0-9]+$"))
`

// seatbeltNetwork is added when the settings allow the network: sockets, and the services that
// resolve names and check certificates.
const seatbeltNetwork = `(allow network-outbound)
(allow network-inbound)
(allow network-bind)
(allow system-socket)
(allow mach-lookup
  (global-name "com.apple.dnssd.service")
  (global-name "com.apple.mDNSResponder")
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.trustd.agent"))
`

// SeatbeltProfile is the profile for p and the parameters it reads (KEY=VALUE, for -D), in a
// fixed order. Writes: the roots, p.Writable and p.TempDir; then, last, no write to each root's
// .git (the entry itself: it cannot be renamed away and replaced), .git/hooks, .git/config and
// .agentd (whether or not they exist: a rule on a path needs no file), and neither read nor
// write of p.Deny.
func SeatbeltProfile(p Policy) (profile string, params []string, err error) {
	if len(p.Roots) == 0 {
		return "", nil, errors.New("no roots")
	}
	var b strings.Builder
	b.WriteString(seatbeltBase)
	param := func(kind string, i int, path string) string {
		key := fmt.Sprintf("%s_%d", kind, i)
		params = append(params, key+"="+path)
		return key
	}
	list := func(kind string, paths []string, match string) []string {
		var out []string
		for i, path := range paths {
			out = append(out, fmt.Sprintf("  (%s (param %q))", match, param(kind, i, path)))
		}
		return out
	}
	for _, list := range [][]string{p.Roots, p.Writable, p.Deny, {p.TempDir}} {
		for _, d := range list {
			if d != "" && !filepath.IsAbs(d) {
				return "", nil, fmt.Errorf("%q is not an absolute path", d)
			}
			if strings.ContainsRune(d, 0) {
				return "", nil, fmt.Errorf("%q holds a NUL byte", d)
			}
		}
	}
	roots := resolveAll(p.Roots)
	writable := resolveAll(append(append([]string{}, p.Writable...), p.TempDir))
	deny := resolveAll(p.Deny)
	var w []string
	w = append(w, list("ROOT", roots, "subpath")...)
	w = append(w, list("WRITABLE", writable, "subpath")...)
	b.WriteString("(allow file-write*\n" + strings.Join(w, "\n") + ")\n")
	if p.Network {
		b.WriteString(seatbeltNetwork)
	}
	// Last: what no allow above may give (last match wins).
	var prot []string
	n := 0
	for _, r := range roots {
		for _, e := range []struct{ rel, match string }{{".git", "literal"}, {".git/hooks", "subpath"}, {".git/config", "literal"}, {".agentd", "subpath"}} {
			prot = append(prot, fmt.Sprintf("  (%s (param %q))", e.match, param("PROTECT", n, filepath.Join(r, e.rel))))
			n++
		}
	}
	b.WriteString("(deny file-write*\n" + strings.Join(prot, "\n") + ")\n")
	if len(deny) > 0 {
		b.WriteString("(deny file-read* file-write*\n" + strings.Join(list("DENY", deny, "subpath"), "\n") + ")\n")
	}
	return b.String(), params, nil
}

// seatbeltArgs is sandbox-exec's argv after its name, up to the program: the profile and its
// parameters.
func seatbeltArgs(p Policy) ([]string, error) {
	profile, params, err := SeatbeltProfile(p)
	if err != nil {
		return nil, err
	}
	args := []string{"-p", profile}
	for _, kv := range params {
		args = append(args, "-D", kv)
	}
	return args, nil
}

// resolveAll resolves each path (resolve) and drops duplicates and empty ones.
func resolveAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if r := resolve(p); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// resolve is p with the symbolic links of its longest existing prefix resolved; the rest, which
// does not exist yet, is appended as written (a denied ~/.aws that may be created later).
func resolve(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for cur := p; ; cur = filepath.Dir(cur) {
		if _, err := os.Lstat(cur); err == nil {
			if r, err := filepath.EvalSymlinks(cur); err == nil {
				slices.Reverse(rest)
				return filepath.Join(append([]string{r}, rest...)...)
			}
		}
		if cur == filepath.Dir(cur) {
			return p
		}
		rest = append(rest, filepath.Base(cur))
	}
}
