package keys

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNamedFileFallback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d", "mcp-oauth.json")
	n := &Named{Service: "agentd-test", Path: path, Probe: func() error { return errors.New("no keyring") }}
	if err := n.Set("https://as.example https://mcp.example/mcp", "tok"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, %v", fi.Mode(), err)
	}
	if v, ok, err := n.Get("https://as.example https://mcp.example/mcp"); v != "tok" || !ok || err != nil {
		t.Errorf("Get = %q %v %v", v, ok, err)
	}
	if n.Where() != path {
		t.Errorf("Where = %s", n.Where())
	}
	os.Chmod(path, 0o644)
	if _, _, err := n.Get("x"); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("a file others can read was used: %v", err)
	}
	os.Chmod(path, 0o600)
	if err := n.Delete("https://as.example https://mcp.example/mcp"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("the emptied file was kept")
	}
}
