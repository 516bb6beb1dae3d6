package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doctorWith runs agentd doctor with user settings v and returns its exit code and output.
func doctorWith(t *testing.T, v any, args ...string) (int, string) {
	t.Helper()
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	t.Setenv("AGENTD_SECRET_STORE", "file")
	b, _ := json.Marshal(v)
	os.MkdirAll(filepath.Join(cfgHome, "agentd"), 0o755)
	if err := os.WriteFile(filepath.Join(cfgHome, "agentd", "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := runDoctor(append([]string{"-C", t.TempDir()}, args...), &out, &errb)
	return code, out.String() + errb.String()
}

// agentd doctor prints one line for each layer and provider, says what to do about what is
// missing, and exits 1 when something is broken: here the sandbox, made unavailable on purpose,
// and a default provider whose server does not answer.
func TestDoctor(t *testing.T) {
	answering := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) }))
	defer answering.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	settings := map[string]any{"provider": "local", "providers": map[string]any{
		"local": map[string]any{"apiType": "openai", "baseUrl": answering.URL + "/v1", "model": "m"},
		"lan":   map[string]any{"apiType": "openai", "baseUrl": deadURL + "/v1", "model": "m"},
	}}
	code, out := doctorWith(t, settings)
	for _, want := range []string{"provider local (default)", "its server answers", "provider lan", "does not answer", "keyring", "mcp", "no MCP servers"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "sandbox") {
		t.Errorf("no sandbox line:\n%s", out)
	}
	sandboxOK := strings.Contains(out, "programs run sandboxed")
	if sandboxOK && code != 0 {
		t.Errorf("exit %d with nothing broken (lan is not the default):\n%s", code, out)
	}

	t.Setenv("AGENTD_TEST_SANDBOX_UNAVAILABLE", "1")
	code, out = doctorWith(t, settings)
	if code != 1 || !strings.Contains(out, "every program asks, even in auto mode") {
		t.Errorf("with the sandbox unavailable: exit %d, want 1 and the reason:\n%s", code, out)
	}
	t.Setenv("AGENTD_TEST_SANDBOX_UNAVAILABLE", "")
	settings["provider"] = "lan"
	if code, out = doctorWith(t, settings); code != 1 || !strings.Contains(out, "check baseUrl") {
		t.Errorf("with the default provider down: exit %d, want 1:\n%s", code, out)
	}
	if code, out = doctorWith(t, settings, "-offline"); strings.Contains(out, "does not answer") {
		t.Errorf("-offline contacted a server:\n%s", out)
	}
	settings["provider"] = "local"
	settings["mcpServers"] = []any{map[string]any{"name": "docs", "command": "/nonexistent/docs-mcp"}}
	if _, out = doctorWith(t, settings, "-offline"); !strings.Contains(out, "mcp docs") || !strings.Contains(out, "agentd mcp list") {
		t.Errorf("no line for the MCP server:\n%s", out)
	}
}
