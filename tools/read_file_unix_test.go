//go:build unix

package tools

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO put where a large file was stat'ed is refused at once, not waited on: read_file's
// range reader opens without blocking and reads only a regular file.
func TestReadLineRangeFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := readLineRange(context.Background(), p, 1, 2)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO was read as lines")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("readLineRange blocked on a FIFO")
	}
}
