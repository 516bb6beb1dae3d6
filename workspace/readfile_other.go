//go:build !unix

package workspace

import (
	"io"
	"os"
	"slices"
)

// ReadInto reads the file at path whole into buf (reused when it has room, grown otherwise), as
// os.ReadFile does and with its errors. A regular file larger than limit is not read: big
// reports it. A directory is reported as one (isDir), not as an error.
func ReadInto(buf []byte, path string, limit int64) (data []byte, big, isDir bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			return buf, false, true, nil
		}
		return buf, false, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return buf, false, false, err
	}
	if st.IsDir() {
		return buf, false, true, nil
	}
	if st.Size() > limit {
		return buf, true, false, nil
	}
	if want := max(int(st.Size())+1, 512); cap(buf) < want {
		buf = make([]byte, 0, want)
	}
	buf = buf[:0]
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, false, false, nil
		}
		if err != nil {
			return buf, false, false, err
		}
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return buf, true, false, nil
			}
			buf = slices.Grow(buf, len(buf))
		}
	}
}
