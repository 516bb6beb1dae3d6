package tools

import (
	"os"
	"testing"
)

func TestCreateDir(t *testing.T) {
	h := newHarness(t, map[string]string{"f": "x"})
	mustOK(t, h.run("create_dir", map[string]any{"path": "a/b/c"}))
	if st, err := os.Stat(h.path("a/b/c")); err != nil || !st.IsDir() {
		t.Fatal("directory not created")
	}
	r := mustOK(t, h.run("create_dir", map[string]any{"path": "a/b"}))
	mustContain(t, r.Output, "already exists")
	mustErr(t, h.run("create_dir", map[string]any{"path": "f"}), "is a file")
	mustErr(t, h.run("create_dir", map[string]any{"path": ".git/x"}), ".git")
	mustErr(t, h.run("create_dir", map[string]any{"path": "/"}), "outside")
}
