package keys

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
)

func TestFileStoreBoundToOrigin(t *testing.T) {
	s := &File{Path: filepath.Join(t.TempDir(), "agentd", "secrets.json")}
	if err := s.Set("https://api.example.com/v1", "k1"); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(s.Path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if v, ok, _ := s.Get("https://api.example.com:443/other"); !ok || v != "k1" {
		t.Fatal("same origin not found")
	}
	for _, other := range []string{"http://api.example.com", "https://api.example.com.evil.net", "https://api.example.com:8443"} {
		if _, ok, _ := s.Get(other); ok {
			t.Fatalf("key offered to %s", other)
		}
	}
	os.Chmod(s.Path, 0o644)
	if _, ok, err := s.Get("https://api.example.com"); ok || err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("a world-readable store was used (err %v)", err)
	}
	os.Chmod(s.Path, 0o600)
	if err := s.Delete("https://api.example.com"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get("https://api.example.com"); ok {
		t.Fatal("deleted key still there")
	}
}

// TestAutoUsesTheKeyringWhenOneAnswers uses go-keyring's mock: keys go to the keyring, filed by
// origin, and a key left in the file from before is still found and moved.
func TestAutoUsesTheKeyringWhenOneAnswers(t *testing.T) {
	keyring.MockInit()
	dir := t.TempDir()
	old := &File{Path: filepath.Join(dir, "secrets.json")}
	old.Set("https://old.example", "k-old")
	a := &Auto{File: old, Keyring: Keyring{}, Probe: func() error { return nil }}
	if a.Fallback() != "" || a.Where() != "the OS keyring" {
		t.Fatalf("where = %s (%s)", a.Where(), a.Fallback())
	}
	if err := a.Set("https://api.openai.com/v1", "sk-ring"); err != nil {
		t.Fatal(err)
	}
	if v, err := keyring.Get(Service, "https://api.openai.com"); err != nil || v != "sk-ring" {
		t.Fatalf("keyring holds %q, %v", v, err)
	}
	if _, ok, _ := old.Get("https://api.openai.com"); ok {
		t.Fatal("the key was written to the file although a keyring answers")
	}
	if v, ok, _ := a.Get("https://old.example"); !ok || v != "k-old" {
		t.Fatal("a key in the file from before is lost")
	}
	if _, ok, _ := a.Get("https://api.openai.com.evil.example"); ok {
		t.Fatal("key offered to another origin")
	}
	if err := a.Delete("https://api.openai.com"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Get("https://api.openai.com"); ok {
		t.Fatal("deleted key still there")
	}
}

func TestAutoFallsBackToTheFileAndSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.json")
	a := &Auto{File: &File{Path: path}, Probe: func() error { return errors.New("no dbus") }}
	if err := a.Set("https://api.anthropic.com", "sk-file"); err != nil {
		t.Fatal(err)
	}
	if why := a.Fallback(); !strings.Contains(why, "no OS keyring answered (no dbus)") || !strings.Contains(why, path) {
		t.Fatalf("fallback = %q", why)
	}
	if v, ok, _ := a.Get("https://api.anthropic.com"); !ok || v != "sk-file" {
		t.Fatal("key not in the file")
	}
}

func registry() *providers.Registry {
	reg := providers.NewRegistry()
	nop := func(providers.Config) (providers.Provider, error) { return nil, nil }
	reg.Register(providers.Dialect{APIType: "openai", New: nop, DefaultBaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY", NeedsNetwork: true,
		Presets: []providers.Preset{{ID: "deepseek", BaseURL: "https://api.deepseek.com/v1", KeyEnv: "DEEPSEEK_API_KEY"}}})
	return reg
}

// TestResolveOrderAndOrigin: providers/set headers bound to their origin, then the variable the
// target allows, then agentd's store, then the client's, each keyed by the origin.
func TestResolveOrderAndOrigin(t *testing.T) {
	store := &File{Path: filepath.Join(t.TempDir(), "s.json")}
	store.Set("https://gw.example", "sk-store")
	var asked []string
	r := &Resolver{Registry: registry(), Store: store, Getenv: func(k string) string {
		return map[string]string{"OPENAI_API_KEY": "sk-env", "DEEPSEEK_API_KEY": "sk-ds"}[k]
	},
		Client: func(_ context.Context, k string) (string, bool, error) {
			asked = append(asked, k)
			return "sk-client", k == ClientKey("https://other.example"), nil
		}}
	ctx := context.Background()
	cases := []struct {
		id, base string
		set      *Headers
		key, src string
	}{
		{"openai", "", nil, "sk-env", "env OPENAI_API_KEY"},
		{"deepseek", "", nil, "sk-ds", "env DEEPSEEK_API_KEY"},
		{"gw", "https://gw.example/v1", nil, "sk-store", "agentd secret store"},
		{"other", "https://other.example/v1", nil, "sk-client", "client secret store"},
		{"none", "https://none.example/v1", nil, "", ""},
		{"set", "https://gw.example/v1", &Headers{Origin: "https://gw.example", Headers: map[string]string{"Api-Key": "h"}}, "", "providers/set"},
		// Headers set for another origin do not follow the provider to this one.
		{"moved", "https://gw.example/v1", &Headers{Origin: "https://old.example", Headers: map[string]string{"Api-Key": "h"}}, "sk-store", "agentd secret store"},
	}
	for _, c := range cases {
		res, err := r.Resolve(ctx, c.id, config.ProviderSettings{APIType: "openai", BaseURL: c.base}, c.set, true)
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if res.Config.APIKey != c.key || res.Source != c.src {
			t.Errorf("%s: key %q from %q, want %q from %q", c.id, res.Config.APIKey, res.Source, c.key, c.src)
		}
	}
	for _, k := range asked {
		if !strings.HasPrefix(k, "agentd.apiKey.https://") {
			t.Errorf("client asked for %q", k)
		}
	}
}

// TestAutoLocal: lookups are local when the store keeps to its file or no session bus is there
// for the keyring probe; a probe agentd does not know may ask anything.
func TestAutoLocal(t *testing.T) {
	t.Setenv("AGENTD_SECRET_STORE", "file")
	if !Default().Local() {
		t.Fatal("AGENTD_SECRET_STORE=file: not local")
	}
	t.Setenv("AGENTD_SECRET_STORE", "")
	if got, want := Default().Local(), sessionBus() != nil; got != want {
		t.Fatalf("default store: Local() = %v, want %v (session bus: %v)", got, want, sessionBus())
	}
	if (&Auto{File: &File{}, Probe: func() error { return nil }}).Local() {
		t.Fatal("a store with its own probe says it is local")
	}
	if !(&File{}).Local() {
		t.Fatal("the file store is not local")
	}
}
