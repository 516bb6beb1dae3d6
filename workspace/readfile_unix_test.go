//go:build unix

package workspace

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A read must end, whatever the path holds: a FIFO with no writer (its open used to wait for
// one), a FIFO whose writer holds it open and writes nothing, and a device that never ends.
func TestReadIntoDoesNotBlock(t *testing.T) {
	d := t.TempDir()
	fifo := filepath.Join(d, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, bufCap := range []int{0, 64 << 10} {
		done := make(chan error, 1)
		go func() {
			got, big, isDir, err := ReadInto(make([]byte, 0, bufCap), fifo, 1<<20)
			if err == nil && (len(got) != 0 || big || isDir) {
				err = os.ErrInvalid
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("a FIFO with no writer (buffer %d): %v, want it read as empty", bufCap, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("a FIFO with no writer (buffer %d): the read blocked", bufCap)
		}
	}

	// A writer that holds the FIFO open and writes nothing: the read fails, it does not wait.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // O_RDWR: opens without waiting for a reader
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	done := make(chan error, 1)
	go func() {
		_, _, _, err := ReadInto(make([]byte, 0, 64<<10), fifo, 1<<20)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("a FIFO held open with nothing written: no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO held open with nothing written: the read blocked")
	}

	// /dev/zero never ends: it is big once past the limit, for either buffer.
	if _, err := os.Stat("/dev/zero"); err == nil {
		for _, bufCap := range []int{0, 64 << 10} {
			got, big, isDir, err := ReadInto(make([]byte, 0, bufCap), "/dev/zero", 1<<20)
			if !big || isDir || err != nil || cap(got) > 4<<20 {
				t.Errorf("/dev/zero (buffer %d): a %d-byte buffer, big %v, dir %v, %v", bufCap, cap(got), big, isDir, err)
			}
		}
	}
}

// A file far over the limit is found big without being read up to it: a search's buffer is
// sized, not grown through 32 MB, for a 1 GB (sparse) file.
func TestReadIntoHugeFileNotRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge")
	if err := os.WriteFile(p, []byte("head\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 1<<30); err != nil {
		t.Fatal(err)
	}
	for _, bufCap := range []int{0, 512, 64 << 10} {
		got, big, isDir, err := ReadInto(make([]byte, 0, bufCap), p, 32<<20)
		if !big || isDir || err != nil {
			t.Errorf("1 GB with a 32 MB limit (buffer %d): %d bytes, big %v, dir %v, %v", bufCap, len(got), big, isDir, err)
		}
		if cap(got) > 2*max(bufCap, 512) {
			t.Errorf("1 GB with a 32 MB limit (buffer %d): the buffer grew to %d bytes reading it", bufCap, cap(got))
		}
	}
}

// Exactly at the buffer's size, one byte over and one byte under; and a limit below the
// buffer's room: what fits the buffer but passes the limit is big, as a sized read says.
func TestReadIntoBufferEdges(t *testing.T) {
	d := t.TempDir()
	for _, n := range []int{0, 1, 4095, 4096, 4097, 8192, 100_000} {
		p := filepath.Join(d, "f")
		want := bytes.Repeat([]byte{'a'}, n)
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, big, _, err := ReadInto(make([]byte, 0, 4096), p, math.MaxInt64)
		if big || err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes into 4,096: %d bytes, big %v, %v", n, len(got), big, err)
		}
		got, big, _, err = ReadInto(make([]byte, 0, 64<<10), p, 4096)
		if wantBig := n > 4096; big != wantBig || err != nil || (!big && !bytes.Equal(got, want)) {
			t.Errorf("%d bytes with a 4,096 limit: %d bytes, big %v (want %v), %v", n, len(got), big, wantBig, err)
		}
	}
}

// A file appended to while it is read: every read gives a prefix of what was written by its
// end (never bytes from nowhere, never an error), and the limit still holds.
func TestReadIntoGrowingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grows")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n")
	const lines, limit = 20_000, 1 << 20
	var wg sync.WaitGroup
	wg.Go(func() {
		for range lines {
			if _, err := f.Write(line); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var reads []int
	buf := make([]byte, 0, 64<<10)
	for i := 0; i < 200; i++ {
		var big bool
		buf, big, _, err = ReadInto(buf, p, limit)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if big {
			continue
		}
		if len(buf) > limit {
			t.Fatalf("read %d: %d bytes over a limit of %d", i, len(buf), limit)
		}
		for j := 0; j+len(line) <= len(buf); j += len(line) {
			if !bytes.Equal(buf[j:j+len(line)], line) {
				t.Fatalf("read %d: bytes at %d are not what was written", i, j)
			}
		}
		if rest := len(buf) % len(line); rest != 0 && !bytes.Equal(buf[len(buf)-rest:], line[:rest]) {
			t.Fatalf("read %d: a torn tail that is not a prefix of the line", i)
		}
		reads = append(reads, len(buf))
	}
	wg.Wait()
	if len(reads) == 0 {
		t.Fatal("no read stayed within the limit")
	}
}
