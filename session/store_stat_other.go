//go:build !linux

package session

import (
	"os"
	"strings"
)

// transcriptStats lists dir's transcripts (*.jsonl) in name order with their size and mtime.
func transcriptStats(dir string) ([]transcriptStat, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]transcriptStat, 0, len(ents))
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed since the listing
		}
		out = append(out, transcriptStat{name: e.Name(), size: fi.Size(), mtime: fi.ModTime().UnixNano()})
	}
	return out, nil
}
