package prompts

import "sync"

// lazy is a value made at its first use. A package-level lazy is a zero sync.Once beside a zero
// value, which costs the package's init nothing, where a package-level sync.OnceValue is a call
// and a closure at every start (internal/inittest holds agentd's packages to no init work).
type lazy[T any] struct {
	once sync.Once
	v    T
}

// get is the value, made by build at the first call.
func (l *lazy[T]) get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}
