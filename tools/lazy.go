package tools

import (
	"regexp"
	"sync"
)

// lazyRegexp is a pattern compiled at its first use. The daemon links every tool, and compiling
// their patterns at package init cost ~1 ms of CPU before agentd could answer initialize; most
// sessions never call the tool that needs a given pattern. expr is a constant, so a bad one
// still panics, in the first test that uses it (TestLazyPatternsCompile).
//
// A package-level lazyRegexp is a composite literal the compiler lays out (a string beside a
// zero sync.Once), so it costs the package's init nothing; a package-level sync.OnceValue is a
// call and a closure at every start.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}
