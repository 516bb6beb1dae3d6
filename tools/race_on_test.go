//go:build race

package tools

// raceBuild: the race detector allocates on its own, so allocation counts mean nothing under it.
const raceBuild = true
