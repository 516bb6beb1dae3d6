package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The key follows what the binary is built from, and only that.
func TestSourceKey(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	write(t, filepath.Join(root, "cmd/x/main.go"), "package main\n\nfunc main() {}\n")
	write(t, filepath.Join(root, "cmd/x/doc.md"), "embedded\n")
	key := func() string {
		k, err := sourceKey(root, false)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	if k0 != key() {
		t.Fatal("the key is not stable")
	}
	if k, _ := sourceKey(root, true); k == k0 {
		t.Error("a race build has the same key")
	}
	// Tests, docs, testdata and dot-directories do not change the binary.
	write(t, filepath.Join(root, "cmd/x/main_test.go"), "package main\n")
	write(t, filepath.Join(root, "testdata/a.txt"), "x")
	write(t, filepath.Join(root, "docs/a.md"), "x")
	write(t, filepath.Join(root, ".git/HEAD"), "x")
	if key() != k0 {
		t.Error("a test file, testdata, docs or .git changed the key")
	}
	// A source, an embedded file or go.mod does.
	for _, f := range []string{"cmd/x/main.go", "cmd/x/doc.md", "go.mod"} {
		b, _ := os.ReadFile(filepath.Join(root, f))
		write(t, filepath.Join(root, f), string(b)+"\n")
		k := key()
		if k == k0 {
			t.Errorf("changing %s did not change the key", f)
		}
		k0 = k
	}
	// So does a file's name.
	os.Rename(filepath.Join(root, "cmd/x/doc.md"), filepath.Join(root, "cmd/x/doc2.md"))
	if key() == k0 {
		t.Error("renaming a file did not change the key")
	}
}

// Packages that ask at the same time get one build.
func TestBuildOnceConcurrently(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	write(t, filepath.Join(root, "cmd/x/main.go"), "package main\n\nfunc main() { println(\"built\") }\n")
	dir := filepath.Join(t.TempDir(), "key")
	bin := filepath.Join(dir, "x")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = buildLocked(root, "./cmd/x", dir, bin, false)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin).CombinedOutput(); err != nil || string(out) != "built\n" {
		t.Fatalf("binary: %q %v", out, err)
	}
	// A second call finds it and builds nothing.
	if err := buildLocked(root, "./cmd/x", dir, bin, false); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(bin); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("built again")
	}
	if _, err := os.Stat(filepath.Join(dir, "lock")); !os.IsNotExist(err) {
		t.Errorf("lock left behind: %v", err)
	}
	// A build error is reported, and leaves no binary and no lock.
	write(t, filepath.Join(root, "cmd/y/main.go"), "package main\n\nfunc main() { undefined() }\n")
	ybin := filepath.Join(dir, "y")
	if err := buildLocked(root, "./cmd/y", dir, ybin, false); err == nil {
		t.Error("a broken package built")
	}
	if _, err := os.Stat(ybin); !os.IsNotExist(err) {
		t.Error("a failed build left a binary")
	}
}

// prune keeps the recent and the recently used, and removes the rest.
func TestPrune(t *testing.T) {
	base := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	for i := range 12 {
		dir := filepath.Join(base, fmt.Sprintf("k%02d", i))
		write(t, filepath.Join(dir, "agentd"), "x")
		mt := old.Add(-time.Duration(i) * time.Minute) // k00 the most recent
		if i == 11 {
			mt = time.Now() // in use
		}
		if err := os.Chtimes(dir, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	prune(base, "k05")
	var left []string
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	// k11 (used now) and the current key stay, with the 8 most recent others.
	want := []string{"k00", "k01", "k02", "k03", "k04", "k05", "k06", "k07", "k11"}
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
