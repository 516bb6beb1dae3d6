//go:build !unix

package tools

import (
	"io"
	"os"
	"slices"
)

// readInto reads the file at path into buf (grown as needed); big reports a file over limit.
func readInto(buf []byte, path string, limit int64) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return buf, false, err
	}
	if st.Size() > limit {
		return buf, true, nil
	}
	want := int(st.Size()) + 1
	if cap(buf) < want {
		buf = make([]byte, 0, max(want, 64<<10))
	}
	buf = buf[:0]
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, false, nil
		}
		if err != nil {
			return buf, false, err
		}
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return buf, true, nil
			}
			buf = slices.Grow(buf, len(buf))
		}
	}
}
