package semindex

import (
	"io/fs"
	"syscall"
)

// statIDs is a file's inode and change time (ns), 0 where the system gives none.
func statIDs(info fs.FileInfo) (ino uint64, ctime int64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), st.Ctim.Nano()
	}
	return 0, 0
}
