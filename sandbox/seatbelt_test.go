package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// An attacker's path (a repository cloned under a name of its choosing, a project's
// sandbox.deny) never becomes text of the profile: the profile is the same with hostile paths as
// with plain ones, and each path reaches sandbox-exec byte for byte as one -D parameter.
func TestSeatbeltPathsCannotInjectRules(t *testing.T) {
	hostile := []string{
		`/w/a") (allow default) ("`,
		`/w/back\slash\"`,
		"/w/new\nline)(allow network*)",
		`/w/#"regex"`,
		`/w/;comment`,
	}
	plain := []string{"/w/a", "/w/b", "/w/c", "/w/d", "/w/e"}
	build := func(paths []string) (string, []string) {
		prof, params, err := SeatbeltProfile(Policy{Roots: paths[:2], Writable: paths[2:3], Deny: paths[3:], TempDir: "/w/tmp"})
		if err != nil {
			t.Fatal(err)
		}
		return prof, params
	}
	hp, hparams := build(hostile)
	pp, _ := build(plain)
	if hp != pp {
		t.Errorf("the profile changes with the paths' text:\n%s\n---\n%s", hp, pp)
	}
	for _, h := range hostile {
		if strings.Contains(hp, h) || strings.Contains(hp, "/w/") {
			t.Errorf("a path is in the profile's text: %q", h)
		}
		if !slices.ContainsFunc(hparams, func(kv string) bool { _, v, _ := strings.Cut(kv, "="); return v == h }) {
			t.Errorf("no parameter carries %q exactly: %q", h, hparams)
		}
	}
	// Every (param "KEY") the profile reads is one it is given, and the other way round.
	read := map[string]bool{}
	for _, m := range regexp.MustCompile(`\(param "([A-Z]+_[0-9]+)"\)`).FindAllStringSubmatch(hp, -1) {
		read[m[1]] = true
	}
	for _, kv := range hparams {
		k, _, _ := strings.Cut(kv, "=")
		if !read[k] {
			t.Errorf("parameter %s is given but not read", k)
		}
		delete(read, k)
	}
	if len(read) != 0 {
		t.Errorf("the profile reads parameters it is not given: %v", read)
	}
	args, err := seatbeltArgs(Policy{Roots: hostile[:1]})
	if err != nil || args[0] != "-p" || args[2] != "-D" || !strings.HasPrefix(args[3], "ROOT_0=") {
		t.Errorf("sandbox-exec's arguments: %q, %v", args, err)
	}
	if _, _, err := SeatbeltProfile(Policy{Roots: []string{"relative/dir"}}); err == nil {
		t.Error("a relative root was accepted")
	}
	if _, _, err := SeatbeltProfile(Policy{Roots: []string{"/w"}, Deny: []string{"/w/\x00x"}}); err == nil {
		t.Error("a path with a NUL byte was accepted")
	}
}

// The rules come in the order last-match-wins needs: the catch-all deny first, every allow of a
// file operation before every deny of it; the protected entries and deny list are refused
// whether or not they exist; the network only when the settings allow it.
func TestSeatbeltProfileRules(t *testing.T) {
	p := Policy{Roots: []string{"/p/one", "/p/two"}, Writable: []string{"/cache"}, TempDir: "/t/run-1", Deny: []string{"/home/u/.ssh"}}
	prof, params, err := SeatbeltProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	val := map[string]string{}
	for _, kv := range params {
		k, v, _ := strings.Cut(kv, "=")
		val[k] = v
	}
	type rule struct {
		action string
		ops    []string
		paths  []string
	}
	var rules []rule
	ruleRe := regexp.MustCompile(`(?s)\((allow|deny) ([a-z*\- ]+?)\s*(\n|\))`)
	for _, loc := range ruleRe.FindAllStringSubmatchIndex(prof, -1) {
		r := rule{action: prof[loc[2]:loc[3]], ops: strings.Fields(prof[loc[4]:loc[5]])}
		// The rule's body runs to the next rule.
		end := len(prof)
		if next := ruleRe.FindStringIndex(prof[loc[1]:]); next != nil {
			end = loc[1] + next[0]
		}
		for _, m := range regexp.MustCompile(`\(param "([A-Z_0-9]+)"\)`).FindAllStringSubmatch(prof[loc[0]:end], -1) {
			r.paths = append(r.paths, val[m[1]])
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 || rules[0].action != "deny" || rules[0].ops[0] != "default" {
		t.Fatalf("the profile does not start with (deny default):\n%s", prof)
	}
	last := func(action, op string) (int, []string) {
		at, paths := -1, []string(nil)
		for i, r := range rules {
			if r.action == action && slices.Contains(r.ops, op) {
				if action == "allow" || at < 0 {
					at = i
				}
				paths = append(paths, r.paths...)
			}
		}
		return at, paths
	}
	lastAllowWrite, writes := last("allow", "file-write*")
	firstDenyWrite, denied := last("deny", "file-write*")
	lastAllowRead, _ := last("allow", "file-read*")
	firstDenyRead, deniedReads := last("deny", "file-read*")
	if lastAllowWrite < 0 || firstDenyWrite < lastAllowWrite || firstDenyRead < lastAllowRead {
		t.Errorf("a deny comes before an allow it must override (allow write %d, deny write %d, allow read %d, deny read %d):\n%s", lastAllowWrite, firstDenyWrite, lastAllowRead, firstDenyRead, prof)
	}
	for _, w := range []string{"/p/one", "/p/two", "/cache", "/t/run-1"} {
		if !slices.Contains(writes, w) {
			t.Errorf("%s is not writable: %q", w, writes)
		}
	}
	for _, d := range []string{"/p/one/.git", "/p/one/.git/hooks", "/p/one/.git/config", "/p/one/.agentd", "/p/two/.agentd", "/home/u/.ssh"} {
		if !slices.Contains(denied, d) {
			t.Errorf("%s is not refused for writing: %q", d, denied)
		}
	}
	if !slices.Contains(deniedReads, "/home/u/.ssh") {
		t.Errorf("~/.ssh is readable: %q", deniedReads)
	}
	if strings.Contains(prof, "network") {
		t.Errorf("the network is allowed with it off:\n%s", prof)
	}
	p.Network = true
	if on, _, _ := SeatbeltProfile(p); !strings.Contains(on, "(allow network-outbound)") {
		t.Errorf("no network with it on:\n%s", on)
	}
	for _, bad := range []string{"(allow default)", "(allow file-write*)\n", "(allow mach-lookup)\n", "launchservices", "(allow network"} {
		if strings.Contains(prof, bad) {
			t.Errorf("the profile holds %q", bad)
		}
	}
}

// Seatbelt matches the path the kernel resolved, so a root reached through a symbolic link is
// given as its target, and a denied path that does not exist yet under a linked directory too.
func TestSeatbeltResolvesLinks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	os.MkdirAll(real, 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	_, params, err := SeatbeltProfile(Policy{Roots: []string{link}, Deny: []string{filepath.Join(link, "later", ".aws")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ROOT_0=" + real, "PROTECT_0=" + real + "/.git", "DENY_0=" + real + "/later/.aws"}
	for _, w := range want {
		if !slices.Contains(params, w) {
			t.Errorf("no %s in %q", w, params)
		}
	}
	if slices.ContainsFunc(params, func(kv string) bool { return strings.Contains(kv, link+"/") || strings.HasSuffix(kv, link) }) {
		t.Errorf("a parameter keeps the link: %q", params)
	}
}
