//go:build !linux

package providertest

func threadCPU() (int64, bool) { return 0, false }
