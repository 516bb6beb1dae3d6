//go:build unix

package workspace

import (
	"io/fs"
	"slices"
	"syscall"
	"unsafe"
)

// readText reads the file at path whole, as os.ReadFile does and with its errors, but with the
// raw system calls: os.Open tries to register every file with the network poller (four fcntl
// and an epoll_ctl for a regular file, which the poller refuses) and os.ReadFile reads once more
// to see the end. Here a read costs open, fstat, read, close. A directory is reported as one.
func readText(path string) (text string, isDir bool, err error) {
	var fd int
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		// A directory that may not be listed is still a directory, as os.Stat says.
		var st syscall.Stat_t
		if err != syscall.ENOENT && syscall.Stat(path, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			return "", true, nil
		}
		return "", false, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return "", false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return "", true, nil
	}
	regular := st.Mode&syscall.S_IFMT == syscall.S_IFREG
	size := 0
	if regular && st.Size > 0 && int64(int(st.Size)) == st.Size {
		size = int(st.Size)
	}
	buf := make([]byte, 0, max(size+1, 512))
	for {
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return "", false, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
		if regular && size > 0 && len(buf) == size {
			break // every byte fstat promised: a file growing meanwhile is read as it was
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
	}
	if len(buf) == 0 {
		return "", false, nil
	}
	// buf is never written again: the text shares it instead of copying it.
	return unsafe.String(&buf[0], len(buf)), false, nil
}
