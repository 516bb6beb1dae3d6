package keys

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"
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

func TestNamedUsesTheKeyringWhenOneAnswers(t *testing.T) {
	keyring.MockInit()
	path := filepath.Join(t.TempDir(), "mcp-oauth.json")
	n := &Named{Service: "agentd-mcp-oauth", Path: path, Probe: func() error { return nil }}
	if err := n.Set("iss res", "tok"); err != nil {
		t.Fatal(err)
	}
	if v, err := keyring.Get("agentd-mcp-oauth", "iss res"); v != "tok" || err != nil {
		t.Errorf("keyring holds %q, %v", v, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("the file was written although the keyring answers")
	}
	if n.Where() != "the OS keyring" {
		t.Errorf("Where = %s", n.Where())
	}
	if err := n.Delete("iss res"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := n.Get("iss res"); ok {
		t.Error("still there after Delete")
	}
	if err := n.Delete("iss res"); err != nil {
		t.Errorf("forgetting what is not there: %v", err)
	}
}
