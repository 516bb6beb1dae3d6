package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBuiltin writes the built-in set into a directory, as `agentd prompts export` would.
func writeBuiltin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, f := range builtinFS(t) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Issue 26 item 1: the user's prompt config is read through an os.Root of its directory, so an
// included file that a program replaced with a link out of it (to a key, with the rules' shape
// around it) is refused and never becomes prompt text; a link inside the directory still works.
func TestLoadDirRefusesLinksOut(t *testing.T) {
	dir := writeBuiltin(t)
	rules, err := os.ReadFile(filepath.Join(dir, "rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(outside, []byte(strings.Replace(string(rules), "rules:", "# LINKED-OUT-SECRET\nrules:", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "rules.yml"))
	if err := os.Symlink(outside, filepath.Join(dir, "rules.yml")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir, nil); err == nil {
		t.Fatal("a prompt file linked out of the prompt directory was read")
	}

	inside := writeBuiltin(t)
	if err := os.Rename(filepath.Join(inside, "rules.yml"), filepath.Join(inside, "kept.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("kept.txt", filepath.Join(inside, "rules.yml")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(inside, nil); err != nil {
		t.Fatalf("a link inside the prompt directory: %v", err)
	}
}
