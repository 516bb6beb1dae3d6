package config

import "slices"

// The permission modes, named once: the settings validate against them, tools/policy gives them
// their meaning, session offers them as the mode config option.
const (
	ModeAsk  = "ask"
	ModeAuto = "auto"
	ModePlan = "plan"
)

// Modes lists the permission modes in the order they are offered.
var Modes = []string{ModeAsk, ModeAuto, ModePlan}

// ValidMode reports whether m names a permission mode.
func ValidMode(m string) bool { return slices.Contains(Modes, m) }
