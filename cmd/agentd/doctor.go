package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers/keys"
	"github.com/agentd-dev/agentd/rpc"
	"github.com/agentd-dev/agentd/sandbox"
)

const doctorUsage = `usage:
  agentd doctor [-C DIR] [-offline]   print what works here, one line each, and what to do about
                                      what does not: the sandbox's layers, the keyring, each
                                      provider (its key, and whether its server answers), the
                                      MCP servers. Exits 1 when something is broken.
`

// doctorLine is one finding: ok, warn (works, with a limit) or fail (broken).
type doctorLine struct{ state, what, detail string }

// runDoctor is `agentd doctor`.
func runDoctor(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("agentd doctor", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("C", ".", "the project `DIR` whose settings apply")
	offline := fl.Bool("offline", false, "do not contact the providers' servers")
	fl.Usage = func() { fmt.Fprint(stderr, doctorUsage); fl.PrintDefaults() }
	if err := fl.Parse(args); err != nil || fl.NArg() > 0 {
		return exitUsage
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "agentd doctor: %v\n", err)
		return exitUsage
	}
	store, reg := newSettings()
	if err := store.LoadFile(config.LayerUser, config.UserConfigPath()); err != nil {
		printErr(stderr, "agentd doctor", err)
		return exitFailed
	}
	if err := store.LoadFile(config.LayerProject, config.ProjectConfigPath(abs)); err != nil {
		printErr(stderr, "agentd doctor", err)
		return exitFailed
	}
	set := store.Get()
	var lines []doctorLine
	lines = append(lines, sandboxLines(set.Sandbox)...)
	lines = append(lines, keyringLine())
	src := &rpc.ProviderSource{Settings: store, Registry: reg, Secrets: rpc.DefaultSecretStore()}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, p := range src.List(ctx) {
		lines = append(lines, providerLine(ctx, p, p.ProviderID == set.Provider, *offline))
	}
	lines = append(lines, mcpLines(set.MCPServers, set.ProjectMCPServers, abs)...)
	broken := false
	for _, l := range lines {
		fmt.Fprintf(stdout, "%-4s  %-18s %s\n", l.state, l.what, l.detail)
		broken = broken || l.state == "fail"
	}
	if broken {
		return exitFailed
	}
	return 0
}

func sandboxLines(s config.Sandbox) []doctorLine {
	return sandboxReport(runtime.GOOS, sandbox.Probe(), s)
}

// sandboxReport is doctor's lines about the sandbox on goos, with what the platform supports.
func sandboxReport(goos string, st sandbox.Status, s config.Sandbox) []doctorLine {
	var out []doctorLine
	switch goos {
	case "linux":
		rel := "unknown"
		if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
			rel = strings.TrimSpace(string(b))
		}
		out = append(out, doctorLine{"ok", "kernel", "Linux " + rel})
		ll := doctorLine{"ok", "landlock", fmt.Sprintf("ABI %d", st.LandlockABI)}
		switch {
		case st.LandlockABI == 0:
			ll = doctorLine{"fail", "landlock", "not available: boot a kernel of 5.13 or later with landlock in lsm= (e.g. lsm=landlock,lockdown,yama,apparmor,bpf)"}
		case st.LandlockABI < 4:
			ll.detail += ": files only; TCP is kept off by seccomp (IP sockets refused) instead"
		case st.LandlockABI < 6:
			ll.detail += ": files and TCP; signals to agentd are not scoped (ABI 6 does)"
		case st.LandlockABI < 9:
			ll.detail += ": files, TCP and scopes; Unix sockets are refused by seccomp (ABI 9 can allow those in the roots)"
		}
		out = append(out, ll)
		sc := doctorLine{"ok", "seccomp", "filters load"}
		if !st.Seccomp {
			sc = doctorLine{"fail", "seccomp", "not available (a container started without it?): run agentd where seccomp filters are allowed"}
		}
		out = append(out, sc)
		ns := doctorLine{"ok", "user namespaces", "available"}
		if !st.UserNamespaces {
			ns = doctorLine{"fail", "user namespaces", "unprivileged user namespaces are off: sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ an AppArmor profile allowing userns for agentd"}
		}
		out = append(out, ns)
	case "darwin":
		sb := doctorLine{"ok", "seatbelt", sandbox.SeatbeltExec + " confines programs"}
		if !st.Seatbelt {
			sb = doctorLine{"fail", "seatbelt", st.Reason + ": run agentd outside another sandbox, on a macOS with " + sandbox.SeatbeltExec}
		}
		out = append(out, sb)
	}
	mode := s.Mode
	switch {
	case mode == config.SandboxOff:
		out = append(out, doctorLine{"warn", "sandbox", "off (sandbox.mode \"off\"): programs run with your rights; auto mode runs them without asking"})
	case st.Available:
		out = append(out, doctorLine{"ok", "sandbox", fmt.Sprintf("programs run sandboxed (sandbox.mode %q, network %v)", mode, s.Network)})
	case st.Unsupported && mode == config.SandboxRequired:
		out = append(out, doctorLine{"fail", "sandbox", st.Reason + ", and sandbox.mode is \"required\": programs will not run; set sandbox.mode to \"auto\" to have each one asked"})
	case st.Unsupported:
		// Not broken: this platform has no sandbox, and programs ask as they did before it.
		out = append(out, doctorLine{"warn", "sandbox", st.Reason + ": programs run with your rights, so each one asks before it runs, even in auto mode"})
	case mode == config.SandboxRequired:
		out = append(out, doctorLine{"fail", "sandbox", "required but unavailable: " + st.Reason + "; programs will not run"})
	default:
		out = append(out, doctorLine{"fail", "sandbox", "unavailable: " + st.Reason + "; every program asks, even in auto mode"})
	}
	return out
}

func keyringLine() doctorLine {
	if os.Getenv("AGENTD_SECRET_STORE") == "file" {
		return doctorLine{"ok", "keyring", "not used (AGENTD_SECRET_STORE=file): keys are kept in " + filepath.Join(config.ConfigDir(), "secrets.json")}
	}
	if _, _, err := (keys.Keyring{}).Get("https://agentd-doctor.invalid"); err != nil {
		return doctorLine{"warn", "keyring", fmt.Sprintf("the OS keyring does not answer (%v): keys are kept in %s (mode 0600)", oneLine(err.Error()), filepath.Join(config.ConfigDir(), "secrets.json"))}
	}
	return doctorLine{"ok", "keyring", "the OS keyring answers"}
}

func providerLine(ctx context.Context, p protocol.ProviderInfo, isDefault, offline bool) doctorLine {
	what := "provider " + p.ProviderID
	state := "ok"
	var parts []string
	switch p.KeyStatus {
	case protocol.KeySet:
		parts = append(parts, "key set")
	case protocol.KeyNotNeeded:
		parts = append(parts, "no key needed")
	default:
		parts = append(parts, "no key: `agentd key set "+p.BaseURL+"` or the provider's variable")
		if isDefault {
			state = "fail"
		} else {
			state = "warn"
		}
	}
	if !offline && p.KeyStatus != protocol.KeyMissing {
		if err := reachable(ctx, p.BaseURL); err != nil {
			parts = append(parts, "its server does not answer ("+oneLine(err.Error())+"): check baseUrl and the network")
			if isDefault {
				state = "fail"
			} else if state == "ok" {
				state = "warn"
			}
		} else {
			parts = append(parts, "its server answers")
		}
	}
	if isDefault {
		what += " (default)"
	}
	return doctorLine{state, what, p.BaseURL + ": " + strings.Join(parts, "; ")}
}

// reachable reports whether an HTTP server answers at baseURL: any answer counts (the model list
// needs the key, and doctor sends none).
func reachable(ctx context.Context, baseURL string) error {
	if !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		return nil // a replay file, say
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, baseURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// mcpLines is a line per configured MCP server, without starting any (`agentd mcp list` does).
func mcpLines(user, project []json.RawMessage, dir string) []doctorLine {
	if len(user)+len(project) == 0 {
		return []doctorLine{{"ok", "mcp", "no MCP servers configured"}}
	}
	var out []doctorLine
	add := func(label string, raws []json.RawMessage, state, note string) {
		parse := mcp.Parse
		if strings.HasPrefix(label, "project") {
			parse = mcp.ParseProject
		}
		for i, raw := range raws {
			c, err := parse(fmt.Sprintf("%s[%d]", label, i), raw)
			if err != nil {
				out = append(out, doctorLine{"fail", "mcp", oneLine(err.Error()) + ": fix it in the settings"})
				continue
			}
			out = append(out, doctorLine{state, "mcp " + mcp.Clean(c.Name, 40), fmt.Sprintf("%s %s: %s", c.Type, mcp.Clean(c.Target(), 120), note)})
		}
	}
	add("mcpServers", user, "ok", "configured; `agentd mcp list -C "+dir+"` starts it and says how it fares")
	add("project mcpServers", project, "warn", "from the project file; it starts only once you approve it in a session")
	return out
}
