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
// refuses). A regular file larger than limit is not read: big reports it. A directory is
// reported as one (isDir), not as an error.
//
// A buffer handed in with room (a search's worker reuses one for file after file) is read into
// first, until the read that returns 0: open, read, read, close, with no fstat, as ripgrep
// reads. Only a file that fills it is sized with fstat, so a file far over limit is not read
// to find that out. A nil or small buffer is sized first (open, fstat, read, close: one
// allocation of the right size for a single read). The open does not block: a FIFO or a
// terminal swapped in for a file reads as empty or fails, instead of hanging the search.
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
	size := 0 // the regular file's size, when fstat was asked
	sized := false
	sizeUp := func() (stop bool, err error) {
		sized = true
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return true, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			isDir = true
			return true, nil
		}
		if st.Size > limit {
			big = true
			return true, nil
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Size > 0 && int64(int(st.Size)) == st.Size {
			size = int(st.Size)
		}
		return false, nil
	}
	if cap(buf) < 512 {
		if stop, err := sizeUp(); stop || err != nil {
			return buf, big, isDir, err
		}
		buf = make([]byte, 0, max(size+1, 512))
	}
	buf = buf[:0]
	for {
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EISDIR {
			return buf, false, true, nil
		}
		if err != nil {
			return buf, false, false, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			if int64(len(buf)) > limit {
				return buf[:0], true, false, nil
			}
			return buf, false, false, nil
		}
		buf = buf[:len(buf)+n]
		if size > 0 && len(buf) == size {
			// Every byte fstat promised: skip the read that would return 0. A file growing
			// meanwhile is read as it was.
			return buf, false, false, nil
		}
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return buf[:0], true, false, nil
			}
			want := len(buf)
			if !sized {
				if stop, err := sizeUp(); stop || err != nil {
					return buf[:0], big, isDir, err
				}
				if size == len(buf) {
					return buf, false, false, nil
				}
				if size > len(buf) {
					want = size + 1 - len(buf)
				}
			}
			buf = slices.Grow(buf, want)
		}
	}
}
