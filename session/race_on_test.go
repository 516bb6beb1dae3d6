//go:build race

package session

// raceEnabled scales the timing bounds of tests: the race detector slows the engine several-fold.
const raceEnabled = true
