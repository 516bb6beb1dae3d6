package html

import "sync"

// lazyMap is a map built at its first use. Upstream's package-level map literals (the parser's
// element tables) are built by its init at every start of a program that links the package; a
// package-level lazyMap is a composite literal the compiler lays out (a function beside a zero
// sync.Once), so this copy's init builds nothing: agentd links it for web_fetch, which most
// sessions never call.
type lazyMap[K comparable, V any] struct {
	build func() map[K]V
	once  sync.Once
	m     map[K]V
}

func (l *lazyMap[K, V]) get() map[K]V {
	l.once.Do(func() { l.m = l.build() })
	return l.m
}
