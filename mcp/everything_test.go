package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// everythingServer finds @modelcontextprotocol/server-everything where scripts/test.sh installs
// it (or at $AGENTD_MCP_EVERYTHING). Without it the test skips, saying how to get it; in CI
// (env CI set) it fails instead, so a missing install cannot pass unseen.
func everythingServer(t *testing.T) (node, entry string) {
	t.Helper()
	entry = os.Getenv("AGENTD_MCP_EVERYTHING")
	if entry == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		entry = filepath.Join(cache, "agentd-test", "mcp-everything", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	}
	node, err := exec.LookPath("node")
	_, serr := os.Stat(entry)
	if err != nil || serr != nil {
		msg := "@modelcontextprotocol/server-everything (or node) is not installed; scripts/test.sh installs it, or set AGENTD_MCP_EVERYTHING to its dist/index.js"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, entry
}

// The reference server over stdio: its tools arrive under the rules (13 of them, so the budget
// keeps 12), a call runs, and closing the set stops node at once.
func TestServerEverything(t *testing.T) {
	node, entry := everythingServer(t)
	set, n := open(t, Config{Name: "everything", Type: "stdio", Command: node, Args: []string{entry, "stdio"}, Timeout: DefaultTimeout})
	reg := set.Snapshot(context.Background())
	got := contributed(reg)
	if len(got) != Budget {
		t.Errorf("%d tools offered, want the budget's %d: %v", len(got), Budget, keys(got))
	}
	if !hasNotice(n, "over the budget of 12") {
		t.Errorf("notices = %q", n.list())
	}
	echo := got["echo"]
	if echo == nil {
		t.Fatalf("no echo among %v", keys(got))
	}
	if r := run(t, reg, "echo", `{"message":"hi from agentd"}`); r.IsError || !strings.Contains(r.Output, "hi from agentd") {
		t.Errorf("echo = %+v", r)
	}
	set.Close()
}
