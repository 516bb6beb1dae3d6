package workspace

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// readText gives what os.ReadFile gives, errors included, for every kind of file a read may
// meet: empty, smaller and larger than its first buffer, of a size fstat does not know (/proc),
// through a symlink, missing, behind a dangling link, and a directory.
func TestReadTextIsOSReadFile(t *testing.T) {
	d := t.TempDir()
	files := map[string]string{
		"empty":  "",
		"one":    "x",
		"511":    strings.Repeat("a", 511),
		"512":    strings.Repeat("b", 512),
		"big":    strings.Repeat("line of text\n", 10_000),
		"utf8":   "héllo\x00wörld\n",
		"nolf":   "no newline at the end",
		"subdir": "",
	}
	for name, text := range files {
		if name == "subdir" {
			if err := os.Mkdir(filepath.Join(d, name), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(d, "big"), filepath.Join(d, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(d, "gone"), filepath.Join(d, "dangling")); err != nil {
		t.Fatal(err)
	}
	paths := []string{"empty", "one", "511", "512", "big", "utf8", "nolf", "link", "missing", "dangling"}
	for i, p := range paths {
		paths[i] = filepath.Join(d, p)
	}
	if runtime.GOOS == "linux" {
		paths = append(paths, "/proc/self/cmdline")
	}
	for _, p := range paths {
		want, wantErr := os.ReadFile(p)
		got, isDir, err := readText(p)
		if isDir {
			t.Errorf("%s: read as a directory", p)
		}
		if p == "/proc/self/cmdline" {
			if got == "" || err != nil {
				t.Errorf("%s: %q, %v", p, got, err)
			}
			continue
		}
		if got != string(want) || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("%s: readText = %d bytes, %v; os.ReadFile = %d bytes, %v", p, len(got), err, len(want), wantErr)
		}
	}
	if _, isDir, err := readText(filepath.Join(d, "subdir")); !isDir || err != nil {
		t.Errorf("a directory: isDir %v, %v", isDir, err)
	}
}

// A read from the disk allocates the text and the path's bytes for the system call (os.Stat,
// os.ReadFile and the string conversion took eight: the stats, the os.File, the read buffer, the
// text's copy).
func TestDiskReadAllocations(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the raw read is unix's")
	}
	p := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(p, []byte(strings.Repeat("hello, world\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := NewDisk()
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		if doc, err := ws.ReadFile(ctx, p); err != nil || len(doc.Text) != 2600 {
			t.Fatalf("ReadFile: %d bytes, %v", len(doc.Text), err)
		}
	})
	if allocs > 2 {
		t.Errorf("a 2,600-byte read allocates %.0f times, want at most 2 (the path for the system call, the text)", allocs)
	}
}
