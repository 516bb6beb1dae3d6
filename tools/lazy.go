package tools

import (
	"regexp"

	"github.com/agentd-dev/agentd/internal/lazy"
)

// lazyRegexp is a pattern compiled at its first use. The daemon links every tool, and compiling
// their patterns at package init cost ~1 ms of CPU before agentd could answer initialize; most
// sessions never call the tool that needs a given pattern. expr is a constant, so a bad one
// still panics, in the first test that uses it (TestLazyPatternsCompile). A package-level
// lazyRegexp is a composite literal the compiler lays out, so it costs the package's init
// nothing (internal/lazy).
type lazyRegexp struct {
	expr string
	re   lazy.Value[*regexp.Regexp]
}

func (l *lazyRegexp) get() *regexp.Regexp {
	return l.re.Get(func() *regexp.Regexp { return regexp.MustCompile(l.expr) })
}
