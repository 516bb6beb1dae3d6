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

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/sandbox"
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

// What doctor says of the sandbox on each platform: Windows has none, in one line saying that
// every program asks (a warning, not a failure, unless the settings require the sandbox); macOS
// names sandbox-exec; a machine that cannot apply it fails.
func TestDoctorSandboxPerPlatform(t *testing.T) {
	windows := sandbox.Status{Unsupported: true, Reason: "agentd has no sandbox for windows"}
	cases := []struct {
		goos  string
		st    sandbox.Status
		mode  string
		state string
		says  string
	}{
		{"windows", windows, config.SandboxAuto, "warn", "agentd has no sandbox for windows: programs run with your rights, so each one asks before it runs, even in auto mode"},
		{"windows", windows, config.SandboxRequired, "fail", "programs will not run"},
		{"windows", windows, config.SandboxOff, "warn", "programs run with your rights; auto mode runs them without asking"},
		{"darwin", sandbox.Status{Available: true, Seatbelt: true}, config.SandboxAuto, "ok", "programs run sandboxed"},
		{"darwin", sandbox.Status{Reason: "macOS's sandbox-exec cannot confine a program here"}, config.SandboxAuto, "fail", "every program asks, even in auto mode"},
	}
	for _, c := range cases {
		lines := sandboxReport(c.goos, c.st, config.Sandbox{Mode: c.mode})
		last := lines[len(lines)-1]
		if last.what != "sandbox" || last.state != c.state || !strings.Contains(last.detail, c.says) {
			t.Errorf("%s %s: %+v, want %s saying %q", c.goos, c.mode, last, c.state, c.says)
		}
		if c.goos == "windows" && len(lines) != 1 {
			t.Errorf("windows: %d lines, want one: %+v", len(lines), lines)
		}
		if c.goos == "darwin" && lines[0].what != "seatbelt" {
			t.Errorf("darwin: no seatbelt line: %+v", lines)
		}
	}
}
