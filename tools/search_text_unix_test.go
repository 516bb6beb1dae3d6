//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What is not a regular file in the tree is passed over, and named as the path it does not hang
// the search: a FIFO (nobody writes it), a link to a file outside the root, a link to a
// directory outside it. The files beside them are searched as ever.
func TestSearchTextOddFilesInTree(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("needle outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, map[string]string{"a.txt": "needle here\n", "sub/b.txt": "no\nneedle there\n"})
	if err := syscall.Mkfifo(h.path("sub/pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), h.path("out.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, h.path("outdir")); err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() { done <- h.run("search_text", map[string]any{"pattern": "needle", "literal": true}) }()
	var r Result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("search_text blocked on a FIFO in the tree")
	}
	mustOK(t, r)
	mustContain(t, r.Output, "a.txt:1: needle here", "sub/b.txt:2: needle there", "2 matching lines in 2 files")
	if strings.Contains(r.Output, "outside") {
		t.Errorf("a link out of the root was followed:\n%s", r.Output)
	}

	// The FIFO named as the path: an answer, not a hang.
	go func() { done <- h.run("search_text", map[string]any{"pattern": "needle", "path": "sub/pipe"}) }()
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("search_text blocked on a FIFO named as its path")
	}
	if !r.IsError {
		mustContain(t, r.Output, "No matches.")
	}
}
