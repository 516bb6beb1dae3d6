//go:build unix

package workspace

import (
	"io/fs"
	"slices"
	"syscall"
)

// ReadInto reads the file at path whole into buf (reused when it has room, grown otherwise), as
// os.ReadFile does and with its errors, but with the raw system calls: os.Open registers every
// file with the network poller (four fcntl and an epoll_ctl for a regular file, which the poller
// refuses) and os.ReadFile reads once more to see the end, so a read here costs open, fstat,
// read, close. A regular file larger than limit is not read: big reports it. A directory is
// reported as one (isDir), not as an error. The open does not block: a FIFO or a terminal
// named as the path, or swapped in for a file, reads as empty or fails instead of hanging the
// caller (O_NONBLOCK changes nothing for a regular file or a directory).
func ReadInto(buf []byte, path string, limit int64) (data []byte, big, isDir bool, err error) {
	var fd int
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		// A directory that may not be listed is still a directory, as os.Stat says.
		var st syscall.Stat_t
		if err != syscall.ENOENT && syscall.Stat(path, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			return buf, false, true, nil
		}
		return buf, false, false, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return buf, false, false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return buf, false, true, nil
	}
	if st.Size > limit {
		return buf, true, false, nil
	}
	regular := st.Mode&syscall.S_IFMT == syscall.S_IFREG
	size := 0
	if regular && st.Size > 0 && int64(int(st.Size)) == st.Size {
		size = int(st.Size)
	}
	if want := max(size+1, 512); cap(buf) < want {
		buf = make([]byte, 0, want)
	}
	buf = buf[:0]
	for {
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf, false, false, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, false, false, nil
		}
		buf = buf[:len(buf)+n]
		if size > 0 && len(buf) == size {
			// Every byte fstat promised: skip the read that would return 0 (one system call of
			// five). A file growing meanwhile is read as it was.
			return buf, false, false, nil
		}
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return buf, true, false, nil
			}
			buf = slices.Grow(buf, len(buf))
		}
	}
}
