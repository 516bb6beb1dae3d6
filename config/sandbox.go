package config

import (
	"fmt"
	"path/filepath"
	"slices"
)

// Sandbox is the sandbox setting: how run_program's programs are confined (package sandbox).
type Sandbox struct {
	// Mode is SandboxAuto (sandboxed where the platform allows, else every program asks),
	// SandboxRequired (no sandbox, no program) or SandboxOff (programs run with the user's rights).
	Mode string `json:"mode"`
	// Writable are directories, besides the roots and the program's temporary directory, a
	// program may write (a build cache, say).
	Writable []string `json:"writable,omitempty"`
	// Network lets programs use the network.
	Network bool `json:"network"`
	// Deny are paths a program may not read, in addition to the built-in list (agentd's own
	// config and state, ~/.ssh, ~/.gnupg, cloud credentials), which cannot be taken away.
	Deny []string `json:"deny,omitempty"`
}

// The values of Sandbox.Mode.
const (
	SandboxAuto     = "auto"
	SandboxRequired = "required"
	SandboxOff      = "off"
)

// sandboxRows are the sandbox setting's rows of the table. A project may only tighten: make the
// sandbox required, turn the network off, and add to deny; what a program may write and
// whether there is a sandbox at all are the user's.
func sandboxRows() []setting {
	return []setting{
		{path: "sandbox", class: Describe, def: func() map[string]any { return map[string]any{"mode": SandboxAuto, "network": false} }, object: true},
		{path: "sandbox.mode", class: Tighten,
			stricter: func(v any, t Settings) bool {
				return v == SandboxRequired || (v == SandboxAuto && t.Sandbox.Mode != SandboxRequired) || v == t.Sandbox.Mode
			},
			check: func(s Settings, _ string) error {
				switch s.Sandbox.Mode {
				case SandboxAuto, SandboxRequired, SandboxOff:
					return nil
				}
				return &KeyError{Key: "sandbox.mode", Msg: fmt.Sprintf("%q is not one of \"auto\", \"required\", \"off\"", s.Sandbox.Mode)}
			}},
		{path: "sandbox.writable", class: UserOnly, check: func(s Settings, _ string) error { return absPaths("sandbox.writable", s.Sandbox.Writable) }},
		{path: "sandbox.network", class: Tighten, stricter: func(v any, _ Settings) bool { return v == false }},
		{path: "sandbox.deny", class: Tighten,
			// A layer replaces the list: the project's must keep every path the user denies.
			stricter: func(v any, t Settings) bool {
				list, ok := v.([]any)
				if !ok {
					return false
				}
				var got []string
				for _, e := range list {
					s, ok := e.(string)
					if !ok {
						return false
					}
					got = append(got, s)
				}
				for _, d := range t.Sandbox.Deny {
					if !slices.Contains(got, d) {
						return false
					}
				}
				return true
			},
			check: func(s Settings, _ string) error { return absPaths("sandbox.deny", s.Sandbox.Deny) }},
	}
}

func absPaths(key string, paths []string) error {
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			return &KeyError{Key: fmt.Sprintf("%s[%d]", key, i), Msg: fmt.Sprintf("%q is not an absolute path", p)}
		}
	}
	return nil
}
