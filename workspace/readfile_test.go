package workspace

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// ReadInto gives what os.ReadFile gives, errors included, for every kind of file a read may
// meet: empty, smaller and larger than its first buffer, of a size fstat does not know (/proc),
// through a symlink, missing, behind a dangling link, and a directory.
func TestReadIntoIsOSReadFile(t *testing.T) {
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
		b, big, isDir, err := ReadInto(nil, p, math.MaxInt64)
		got := string(b)
		if big {
			t.Errorf("%s: too big without a limit", p)
		}
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
			t.Errorf("%s: ReadInto = %d bytes, %v; os.ReadFile = %d bytes, %v", p, len(got), err, len(want), wantErr)
		}
	}
	if _, _, isDir, err := ReadInto(nil, filepath.Join(d, "subdir"), math.MaxInt64); !isDir || err != nil {
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

// A file over the limit is reported big and not read; one within it is read into the buffer it
// was handed when that has room, so a search's worker reads file after file without allocating.
func TestReadIntoLimitAndBuffer(t *testing.T) {
	d := t.TempDir()
	small, large := filepath.Join(d, "small"), filepath.Join(d, "large")
	if err := os.WriteFile(small, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(large, []byte(strings.Repeat("x", 4096)), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 1024)
	got, big, isDir, err := ReadInto(buf, large, 4095)
	if !big || isDir || err != nil || len(got) != 0 {
		t.Errorf("a 4,096-byte file with a 4,095 limit: %d bytes, big %v, dir %v, %v", len(got), big, isDir, err)
	}
	got, big, _, err = ReadInto(buf, small, 4095)
	if big || err != nil || string(got) != "hello\n" {
		t.Fatalf("a small file: %q, big %v, %v", got, big, err)
	}
	if &got[:1][0] != &buf[:1][0] {
		t.Errorf("a file that fits was read into a new buffer, not the one handed in")
	}
	if got, big, _, err = ReadInto(buf, large, 4096); big || err != nil || len(got) != 4096 {
		t.Errorf("a 4,096-byte file at its limit: %d bytes, big %v, %v", len(got), big, err)
	}
}
