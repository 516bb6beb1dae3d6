package session

import (
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// transcriptStats lists dir's transcripts (*.jsonl) in name order with their size and mtime.
// Each is stat'ed relative to the open directory (fstatat), which spares the kernel the walk of
// the whole path that os.Lstat makes per file: that walk was most of a 1,000-session listing.
func transcriptStats(dir string) ([]transcriptStat, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	raw, err := d.SyscallConn()
	if err != nil {
		return nil, err
	}
	out := make([]transcriptStat, 0, len(names))
	cerr := raw.Control(func(fd uintptr) {
		var st unix.Stat_t
		for _, name := range names {
			if !strings.HasSuffix(name, ".jsonl") {
				continue
			}
			if unix.Fstatat(int(fd), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue // removed since the listing
			}
			out = append(out, transcriptStat{name: name, size: st.Size, mtime: st.Mtim.Nano()})
		}
	})
	return out, cerr
}
