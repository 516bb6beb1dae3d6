// Package lazy holds values made at their first use, for package-level values the daemon may
// never need. A package-level Value is a zero sync.Once beside a zero value, which the compiler
// lays out and the package's init never touches, where a package-level sync.OnceValue is a call
// and a closure at every start: internal/inittest holds agentd's packages to inits that do
// nothing, because each init that runs makes another 64 KB window of the binary resident
// (docs/benchmarks.md). A standard-library leaf every package may import.
package lazy

import "sync"

// Value is a T made by the first Get. Its zero value is ready to use; it must not be copied
// after the first Get.
type Value[T any] struct {
	once sync.Once
	v    T
}

// Get returns the value, made by build at the first call; later calls return the same value and
// do not call build. A build that panics panics in its first Get only, which is why a constant
// the build parses (a pattern, an address) is checked by a test that calls it.
func (l *Value[T]) Get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}
