package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropFromCache drops bin's pages from the page cache, so that the kernel reads it again through
// exec's page faults, as after a reboot. How a file entered the cache decides the size of the
// pages the kernel maps for it: a file just written or read with read(2) sits in large folios, and
// one touch of a large folio maps all of it, which adds 2 MiB and more to the idle RSS of the same
// binary. Measured from the same state, the figure is the binary's and not the cache's.
func dropFromCache(bin string) error {
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil { // dirty pages are not dropped
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
