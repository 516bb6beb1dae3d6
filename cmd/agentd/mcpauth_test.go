package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/mcp/mcpauth/oauthtest"
)

// browserWriter is a terminal whose user opens the link agentd prints.
type browserWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done bool
}

var linkRE = regexp.MustCompile(`(?m)^  (http://\S+)$`)

func (w *browserWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := linkRE.FindStringSubmatch(w.buf.String()); m != nil && !w.done {
		w.done = true
		go oauthtest.Browser(context.Background(), m[1])
	}
	return len(p), nil
}

func (w *browserWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// agentd mcp login prints the link, waits for the callback and keeps the token in the store
// (here the 0600 file); mcp list then reaches the server; logout forgets the token.
func TestMCPLoginLogout(t *testing.T) {
	s := oauthtest.New()
	defer s.Close()
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	t.Setenv("AGENTD_SECRET_STORE", "file")
	b, _ := json.Marshal(map[string]any{"mcpServers": []any{
		map[string]any{"type": "http", "name": "docs", "url": s.URL()},
		map[string]any{"name": "local", "command": "/nonexistent/x"},
	}})
	os.MkdirAll(filepath.Join(cfgHome, "agentd"), 0o700)
	os.WriteFile(filepath.Join(cfgHome, "agentd", "config.json"), b, 0o600)
	tokens := filepath.Join(cfgHome, "agentd", "mcp-oauth.json")

	var errb bytes.Buffer
	out := &browserWriter{}
	if code := runMCP([]string{"login", "docs"}, out, &errb); code != 0 {
		t.Fatalf("login: exit %d: %s %s", code, out, errb.String())
	}
	if !strings.Contains(out.String(), "signed in to docs; the token is kept in "+tokens) {
		t.Errorf("login said %q", out)
	}
	fi, err := os.Stat(tokens)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	var list bytes.Buffer
	runMCP([]string{"list"}, &list, &errb)
	if !regexp.MustCompile(`docs\s+http\s+ready\s+1\s+1`).MatchString(list.String()) {
		t.Errorf("list after login:\n%s", list.String())
	}
	var lo bytes.Buffer
	if code := runMCP([]string{"logout", "docs"}, &lo, &errb); code != 0 || !strings.Contains(lo.String(), "signed out of docs") {
		t.Fatalf("logout: exit %d: %s %s", code, lo.String(), errb.String())
	}
	if _, err := os.Stat(tokens); !os.IsNotExist(err) {
		t.Errorf("the token file is still there after logout: %v", err)
	}
	list.Reset()
	runMCP([]string{"list"}, &list, &errb)
	if !strings.Contains(list.String(), "agentd mcp login docs") {
		t.Errorf("list after logout does not say how to sign in:\n%s", list.String())
	}
	errb.Reset()
	if code := runMCP([]string{"login", "local"}, &lo, &errb); code == 0 || !strings.Contains(errb.String(), "not a Streamable HTTP server") {
		t.Errorf("login of a stdio server: %d %s", code, errb.String())
	}
	errb.Reset()
	if code := runMCP([]string{"login", "nope"}, &lo, &errb); code == 0 || !strings.Contains(errb.String(), `no MCP server named "nope"`) {
		t.Errorf("login of an unknown server: %d %s", code, errb.String())
	}
	if code := runMCP([]string{"login"}, &lo, &errb); code != exitUsage {
		t.Errorf("login without a name: %d", code)
	}
}

// agentd mcp secret keeps a pre-registered client's secret by issuer and client ID without
// printing it; login then signs in with it (HTTP Basic at a server without dynamic
// registration). An entry that does not say agentd keeps its secret is refused.
func TestMCPSecret(t *testing.T) {
	s := oauthtest.New()
	defer s.Close()
	const secret = "cli-kept-secret"
	s.NoRegistration = true
	s.Clients = map[string]string{"pre": secret}
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	t.Setenv("AGENTD_SECRET_STORE", "file")
	b, _ := json.Marshal(map[string]any{"mcpServers": []any{
		map[string]any{"type": "http", "name": "tracker", "url": s.URL(), "oauth": map[string]any{"clientId": "pre", "issuer": s.AS.URL, "clientSecretKeyring": true}},
		map[string]any{"type": "http", "name": "plain", "url": s.URL()},
	}})
	os.MkdirAll(filepath.Join(cfgHome, "agentd"), 0o700)
	os.WriteFile(filepath.Join(cfgHome, "agentd", "config.json"), b, 0o600)
	defer func(r io.Reader) { mcpStdin = r }(mcpStdin)

	var out, errb bytes.Buffer
	mcpStdin = strings.NewReader("")
	if code := runMCP([]string{"secret", "tracker"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "no secret given") {
		t.Fatalf("an empty secret: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	mcpStdin = strings.NewReader(secret + "\n")
	if code := runMCP([]string{"secret", "plain"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "clientSecretKeyring: true") {
		t.Fatalf("a server without a kept client: exit %d: %s", code, errb.String())
	}
	mcpStdin = strings.NewReader(secret + "\n")
	if code := runMCP([]string{"secret", "tracker"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "kept the client secret of tracker (client pre at "+s.AS.URL+")") {
		t.Fatalf("secret: exit %d: %s %s", code, out.String(), errb.String())
	}
	if strings.Contains(out.String()+errb.String(), secret) {
		t.Error("the secret was printed")
	}
	login := &browserWriter{}
	if code := runMCP([]string{"login", "tracker"}, login, &errb); code != 0 {
		t.Fatalf("login with the kept secret: exit %d: %s %s", code, login, errb.String())
	}
	var basic bool
	for _, r := range s.AuthRequests(s.AS.URL) {
		basic = basic || (strings.Contains(r, " /token ") && strings.Contains(r, "client=pre ") && strings.Contains(r, "basic=true"))
	}
	if !basic {
		t.Errorf("no token request authenticated as the pre-registered client: %q", s.AuthRequests(s.AS.URL))
	}
}
