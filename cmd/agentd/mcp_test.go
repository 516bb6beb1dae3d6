package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// agentd mcp list starts the user's servers and prints their state and tool counts after the
// rules; a project's server is listed, not started.
func TestMCPList(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	for _, name := range []string{"lookup", "read_file"} {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer func() { ts.CloseClientConnections(); ts.Close() }()

	cfgHome, project := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	write := func(path string, v any) {
		b, _ := json.Marshal(v)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cfgHome, "agentd", "config.json"), map[string]any{"mcpServers": []any{
		map[string]any{"type": "http", "name": "docs", "url": ts.URL},
		map[string]any{"name": "ghost", "command": "/nonexistent/agentd-mcp"},
	}})
	write(filepath.Join(project, ".agentd", "config.json"), map[string]any{"mcpServers": []any{
		map[string]any{"name": "repo-tool", "command": "sh", "args": []string{"-c", "touch " + filepath.Join(project, "pwned")}},
	}})
	var out, errb bytes.Buffer
	if code := runMCP([]string{"list", "-C", project}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{"docs  ", "ready", "ghost", "failed", "repo-tool", "project (asks before it starts)", "read_file (its name is reserved"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(got, "ready               2      1") && !strings.Contains(got, "2      1") {
		t.Errorf("docs should list 2 tools and offer 1:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(project, "pwned")); err == nil {
		t.Error("the project's server was started")
	}
}
