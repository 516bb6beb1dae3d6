package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A link that leads out of the directory is refused, never followed; one inside it is read; a
// file over the cap and a directory are refused; a missing file is fs.ErrNotExist.
func TestReadConfinedRefusesLinksOut(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("TOPSECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "real.md"), []byte("inside"), 0o600))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	must(os.Symlink(secret, filepath.Join(dir, "abs.md")))
	must(os.Symlink("../"+filepath.Base(outside)+"/secret", filepath.Join(dir, "rel.md")))
	must(os.Symlink("/proc/self/environ", filepath.Join(dir, "env.md")))
	must(os.Symlink(outside, filepath.Join(dir, "sub", "out")))
	must(os.Symlink("real.md", filepath.Join(dir, "in.md")))
	must(os.Symlink("..", filepath.Join(dir, "sub", "up")))

	for _, name := range []string{"abs.md", "rel.md", "env.md", "sub/out/secret", filepath.Join(dir, "abs.md"), secret, "../x"} {
		data, err := ReadConfined(dir, name, 1<<20)
		if err == nil || strings.Contains(string(data), "TOPSECRET") {
			t.Errorf("%s: read %q, %v", name, data, err)
			continue
		}
		if strings.HasSuffix(name, "env.md") || strings.HasSuffix(name, "abs.md") || name == "sub/out/secret" {
			if !errors.Is(err, ErrOutsideRoots) {
				t.Errorf("%s: %v does not say the link leads outside", name, err)
			}
		}
		if _, err := StatConfined(dir, name); err == nil {
			t.Errorf("%s: stat followed the link out", name)
		}
	}
	for _, name := range []string{"real.md", "in.md", "sub/up/real.md", filepath.Join(dir, "in.md")} {
		if data, err := ReadConfined(dir, name, 1<<20); err != nil || string(data) != "inside" {
			t.Errorf("%s: %q, %v; a link inside the directory must work", name, data, err)
		}
	}
	if _, err := ReadConfined(dir, "real.md", 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the cap: %v", err)
	}
	if _, err := ReadConfined(dir, "sub", 0); err == nil {
		t.Error("a directory was read")
	}
	if _, err := ReadConfined(dir, "missing.md", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
