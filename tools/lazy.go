package tools

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use. The daemon links every tool, and compiling their
// patterns at package init cost ~1 ms of CPU before agentd could answer initialize; most sessions
// never call the tool that needs a given pattern. expr is a constant, so a bad one still panics,
// in the first test that uses it.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
