package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/tools"
)

// testServer is the path of the hostile stdio server (internal/testserver), built once.
var testServer string

func TestMain(m *testing.M) {
	if pidFile := os.Getenv("MCP_TEST_PARENT"); pidFile != "" {
		parentOfAServer(pidFile)
		return
	}
	dir, err := os.MkdirTemp("", "mcp-test")
	if err != nil {
		panic(err)
	}
	testServer = filepath.Join(dir, "testserver")
	if out, err := exec.Command("go", "build", "-o", testServer, "./internal/testserver").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// notices collects what a Set reports.
type notices struct {
	mu  sync.Mutex
	all []string
}

func (n *notices) notify(sev, title, desc string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.all = append(n.all, sev+"|"+title+"|"+desc)
}

func (n *notices) list() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.all...)
}

func builtin() *tools.Registry { return tools.Default() }

func stdioConfig(name string, args ...string) Config {
	return Config{Name: name, Type: "stdio", Command: testServer, Args: args, Timeout: DefaultTimeout}
}

func contributed(reg *tools.Registry) map[string]*Tool {
	out := map[string]*Tool{}
	for _, t := range reg.List() {
		if mt, ok := t.(*Tool); ok {
			out[mt.Name()] = mt
		}
	}
	return out
}

func open(t *testing.T, cfgs ...Config) (*Set, *notices) {
	t.Helper()
	p := NewPool(zap.NewNop())
	n := &notices{}
	s := p.Open(cfgs, builtin(), n.notify)
	t.Cleanup(p.Close)
	return s, n
}

func run(t *testing.T, reg *tools.Registry, name, args string) tools.Result {
	t.Helper()
	tool, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("no tool %q in the snapshot", name)
	}
	return tool.Run(context.Background(), &tools.Env{}, []byte(args))
}

// httpServer serves an SDK server over Streamable HTTP on 127.0.0.1; it checks that every
// request carries the configured header.
func httpServer(t *testing.T, srv *sdk.Server) string {
	t.Helper()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func httpConfig(name, url string) Config {
	return Config{Name: name, Type: "http", URL: url, Headers: []NameValue{{"Authorization", "Bearer secret"}}, Timeout: DefaultTimeout}
}

func echoServer(name string, toolNames ...string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: name, Version: "1"}, nil)
	for _, tn := range toolNames {
		s.AddTool(&sdk.Tool{Name: tn, Description: name + "'s " + tn, InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " ran " + tn}}}, nil
			})
	}
	return s
}

// waitFor polls cond: the servers' notifications arrive on their own goroutines.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func hasNotice(n *notices, sub string) bool {
	for _, s := range n.list() {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
