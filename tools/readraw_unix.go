//go:build unix

package tools

import (
	"slices"
	"syscall"
)

// readInto reads the file at path into buf (grown as needed); big reports a file over limit. It
// uses the raw system calls: os.Open registers every file with the network poller and sets it
// non-blocking, which costs more than the read itself for the small files a search reads.
func readInto(buf []byte, path string, limit int64) ([]byte, bool, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return buf, false, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return buf, false, err
	}
	if st.Size > limit {
		return buf, true, nil
	}
	want := int(st.Size) + 1
	if cap(buf) < want {
		buf = make([]byte, 0, max(want, 64<<10))
	}
	buf = buf[:0]
	for {
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf, false, err
		}
		if n == 0 {
			return buf, false, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) == st.Size {
			// All the bytes fstat promised: skip the read that would return 0 (one system call
			// of five per file). A file growing under us is read as it was.
			return buf, false, nil
		}
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return buf, true, nil
			}
			buf = slices.Grow(buf, len(buf))
		}
	}
}
