// Package policy owns the permission decision: whether a tool call runs, asks the user, or is
// refused, as a pure function of the session's mode, the remembered grants and the call. It knows
// tools only by name and effect class, so a new tool needs no policy code.
package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/tools/internal/glob"
)

// Mode is the session's permission mode.
type Mode string

const (
	// ModeAsk runs reads, and asks before writes and programs unless a grant answers.
	ModeAsk Mode = config.ModeAsk
	// ModeAuto runs everything except what a reject_always grant refuses.
	ModeAuto Mode = config.ModeAuto
	// ModePlan runs reads only: the agent plans and changes nothing.
	ModePlan Mode = config.ModePlan
)

// Scope is how long a grant lives.
type Scope string

const (
	ScopeSession Scope = "session"
	ScopeProject Scope = "project"
)

// Grant is a remembered answer. Pattern is a path glob for write tools (an allow must match every
// path the call touches, a reject any one of them; `**` spans directories); Command is the argv of
// an exec tool's call, compared element by element. An allow covers exactly that argv, run with
// exactly the variables in Env and the input whose digest is Stdin (none when they are empty): an
// argument, a variable or an input the user was not shown can make the same program write
// anywhere or run anything (`git log -1 --output=/elsewhere`, GIT_CONFIG_*, LD_PRELOAD,
// `python3 -` with another script), and which arguments are harmless is each program's own
// business. A reject covers that argv and every argv that extends it, whatever the variables and
// input (refusing more is safe), so rejecting ["rm"] refuses ["rm","-rf","x"] but neither
// ["rmdir"] nor ["rm -rf"]. A grant with neither Pattern nor Command matches any call of Tool; Tool ""
// or "*" matches every tool. A reject with a Pattern covers that path for every write tool, whatever
// Tool says (Tool then only records which tool the user was answering).
//
// Grants saved before Command existed hold a command line in Pattern: for exec tools such a reject
// still refuses (its words compared one by one) and such an allow is ignored, so it asks again.
type Grant struct {
	Tool    string   `json:"tool"`
	Pattern string   `json:"pattern,omitempty"`
	Command []string `json:"command,omitempty"`
	// Env and Stdin bind an exec allow to the variables and the input of the call the user was
	// shown: Env as given, Stdin as StdinDigest of it (the input itself may be megabytes, and is
	// not worth keeping in the state file).
	Env   map[string]string `json:"env,omitempty"`
	Stdin string            `json:"stdin,omitempty"`
	// Host limits a fetch tool's grant to requests to that host (see Call.Host).
	Host string `json:"host,omitempty"`
	// Sandboxed limits the grant to programs that run in the sandbox (OptionAllowSandboxed).
	Sandboxed bool  `json:"sandboxed,omitempty"`
	Allow     bool  `json:"allow"`
	Scope     Scope `json:"scope"`
}

// Call is what the policy knows of a tool call.
type Call struct {
	Tool    string
	Effect  tools.Effect
	Paths   []string
	Command []string
	// Env and Stdin are an exec call's extra variables and its input.
	Env   map[string]string
	Stdin string
	// Host is where a fetch sends its request (lowercase, no port), "" when the tool does not say
	// (web_search goes to the configured search provider).
	Host string
	// Sandbox is how a program runs: "" or one of tools.SandboxApplied, SandboxUnavailable,
	// SandboxEscape (policy/sandbox.go).
	Sandbox string
}

// Decision is the policy's answer.
type Decision int

const (
	// Allow runs the call without asking.
	Allow Decision = iota + 1
	// Ask asks the user (or applies the client's default when it has no permission UI).
	Ask
	// Deny refuses the call because of a reject_always grant.
	Deny
	// PlanRefuse refuses a mutating call in plan mode.
	PlanRefuse
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	case PlanRefuse:
		return "plan_refuse"
	}
	return "unknown"
}

// Permission option ids, as the user's answer names them. They are the wire's ids (protocol,
// docs/protocol.md); the policy keeps its own copy so that the permission decision does not
// depend on the wire package, and session's TestPolicyOptionsAreTheWires holds the two equal.
const (
	OptionAllowOnce    = "allow_once"
	OptionAllowSession = "allow_session"
	OptionAllowAlways  = "allow_always"
	OptionRejectOnce   = "reject_once"
	OptionRejectAlways = "reject_always"
)

// Decide is the whole policy. Reads always run. Plan mode refuses anything else but a fetch,
// which changes nothing in the project and asks as in ask mode (research is part of a plan). A matching
// reject grant refuses in every other mode, auto included; then auto allows, and ask allows only
// what a matching allow grant covers. An unknown mode behaves as ask.
func Decide(mode Mode, grants []Grant, call Call) Decision {
	if call.Effect == tools.EffectRead {
		return Allow
	}
	if mode == ModePlan {
		if call.Effect != tools.EffectFetch {
			return PlanRefuse
		}
		mode = ModeAsk
	}
	mode, mustAsk := sandboxMode(mode, call)
	allowed := false
	for _, g := range grants {
		if g.IsZero() || !Matches(g, call) {
			continue
		}
		if !g.Allow {
			return Deny
		}
		allowed = !mustAsk
	}
	if mode == ModeAuto || allowed {
		return Allow
	}
	return Ask
}

// Matches reports whether g covers call.
func Matches(g Grant, call Call) bool {
	pathReject := !g.Allow && g.Pattern != "" && call.Effect == tools.EffectWrite
	if !pathReject && g.Tool != "" && g.Tool != "*" && g.Tool != call.Tool {
		return false
	}
	if !sandboxMatches(g, call) {
		return false
	}
	if g.Command != nil {
		if call.Effect != tools.EffectExec {
			return false
		}
		if !g.Allow {
			return hasPrefix(call.Command, g.Command)
		}
		return slices.Equal(call.Command, g.Command) && maps.Equal(call.Env, g.Env) && g.Stdin == StdinDigest(call.Stdin)
	}
	if g.Host != "" {
		return call.Effect == tools.EffectFetch && call.Host == g.Host
	}
	if g.Pattern == "" {
		return true
	}
	switch call.Effect {
	case tools.EffectExec:
		// A grant saved as a command line (see Grant): only a reject is honoured.
		return !g.Allow && hasPrefix(call.Command, strings.Fields(g.Pattern))
	case tools.EffectWrite:
		if len(call.Paths) == 0 {
			return false
		}
		gl, err := glob.Compile(filepath.ToSlash(g.Pattern))
		if err != nil {
			return false
		}
		// An allow must cover every path; a reject refuses a call touching any path it names.
		for _, p := range call.Paths {
			if gl.Match(filepath.ToSlash(p)) != g.Allow {
				return !g.Allow
			}
		}
		return g.Allow
	}
	return false
}

// hasPrefix reports whether argv starts with prefix; an empty prefix matches only an empty argv
// with no program (a grant is never made for one).
func hasPrefix(argv, prefix []string) bool {
	if len(prefix) == 0 || len(prefix) > len(argv) {
		return len(prefix) == 0 && len(argv) == 0
	}
	return slices.Equal(argv[:len(prefix)], prefix)
}

// GrantFor is the grant that answering optionID creates for call; a one-time answer (allow_once,
// reject_once, an unknown id) creates none and yields the zero Grant, which Decide ignores and
// callers should not store (see Grant.IsZero). Allowing a write tool covers that tool anywhere in
// the roots (the roots already contain it); allowing a program covers that exact argv with those
// exact variables and input; rejecting a program covers that argv and any that extend it; rejecting a write covers the paths of this call (one
// path exactly, several by their common directory); allowing or rejecting a fetch covers its
// host (a grant saved before hosts were recorded covers the whole tool, as it did).
func GrantFor(call Call, optionID string, scope Scope) Grant {
	g := Grant{Tool: call.Tool, Scope: scope}
	switch optionID {
	case OptionAllowSandboxed:
		return Grant{Tool: call.Tool, Sandboxed: true, Allow: true, Scope: ScopeSession}
	case OptionAllowSession:
		g.Allow, g.Scope = true, ScopeSession
	case OptionAllowAlways:
		g.Allow = true
		if scope == "" {
			g.Scope = ScopeProject
		}
	case OptionRejectAlways:
		if scope == "" {
			g.Scope = ScopeProject
		}
	default:
		return Grant{}
	}
	switch call.Effect {
	case tools.EffectExec:
		g.Command = append([]string{}, call.Command...)
		if g.Allow {
			g.Env = maps.Clone(call.Env)
			if len(g.Env) == 0 {
				g.Env = nil
			}
			g.Stdin = StdinDigest(call.Stdin)
		}
	case tools.EffectWrite:
		if !g.Allow {
			g.Pattern = pathPattern(call.Paths)
		}
	case tools.EffectFetch:
		g.Host = call.Host
	}
	return g
}

// IsZero reports whether g is the zero Grant (no remembered answer).
func (g Grant) IsZero() bool { return g.Equal(Grant{}) }

// Equal reports whether g and o are the same grant.
func (g Grant) Equal(o Grant) bool {
	return g.Tool == o.Tool && g.Pattern == o.Pattern && g.Host == o.Host && g.Allow == o.Allow && g.Scope == o.Scope && g.Sandboxed == o.Sandboxed &&
		slices.Equal(g.Command, o.Command) && maps.Equal(g.Env, o.Env) && g.Stdin == o.Stdin
}

// StdinDigest is how a grant records a program's input: "" for none, else "sha256:" and the hex
// SHA-256 of the input.
func StdinDigest(stdin string) string {
	if stdin == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(stdin))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func pathPattern(paths []string) string {
	switch len(paths) {
	case 0:
		return ""
	case 1:
		return escapeGlob(filepath.ToSlash(paths[0]))
	}
	dir := filepath.ToSlash(filepath.Dir(paths[0]))
	for _, p := range paths[1:] {
		p = filepath.ToSlash(p)
		for dir != "/" && dir != "." && !strings.HasPrefix(p, dir+"/") {
			dir = filepath.ToSlash(filepath.Dir(dir))
		}
	}
	return escapeGlob(dir) + "/**"
}

func escapeGlob(p string) string {
	r := strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]", "{", "[{]")
	return r.Replace(p)
}

// Label is the sentence a client shows for g in a list of remembered answers, naming what it
// covers and its scope as the option that made it did ("Always allow `git status` in this
// project").
func (g Grant) Label() string {
	verb := "Allow"
	if !g.Allow {
		verb = "Reject"
	}
	where := " for this session"
	if g.Scope == ScopeProject {
		verb, where = "Always "+strings.ToLower(verb), " in this project"
	}
	var what string
	switch {
	case g.Sandboxed:
		what = "sandboxed programs"
	case len(g.Command) > 0:
		what = "`" + tools.QuoteArgv(g.Command) + "`"
		if len(g.Env) > 0 || g.Stdin != "" {
			what += " with the variables and input it showed"
		}
	case g.Host != "":
		what = g.Tool + " of " + g.Host
	case g.Pattern != "":
		what = g.Tool + " on " + g.Pattern
		if !g.Allow {
			what = "changes to " + g.Pattern
		}
	case g.Tool == "" || g.Tool == "*":
		what = "every tool"
	default:
		what = g.Tool
	}
	return verb + " " + what + where
}
