package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A server that answers tools/list with more than a message may hold costs only itself: it is
// reported as not available, with the reason, and the other server's tools are offered.
func TestOversizedAnswerCostsOnlyItsServer(t *testing.T) {
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &msg)
		w.Header().Set("Content-Type", "application/json")
		switch msg.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}}}}`, msg.ID)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"x","description":"%s"}]}}`, msg.ID, strings.Repeat("x", maxMessage))
		default:
			if len(msg.ID) == 0 {
				w.WriteHeader(http.StatusAccepted) // a notification
				return
			}
			// server/discover included: a 2025 server does not know it, and says so.
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
		}
	}))
	t.Cleanup(huge.Close)
	good := httpServer(t, echoServer("good", "fine"))
	set, n := open(t, Config{Name: "huge", Type: "http", URL: huge.URL, Timeout: DefaultTimeout}, httpConfig("good", good))
	reg := set.Snapshot(context.Background())
	if _, ok := reg.Lookup("fine"); !ok {
		t.Error("the good server's tool is missing")
	}
	waitFor(t, "the notice", func() bool { return hasNotice(n, "MCP server huge is not available") })
	if !hasNotice(n, "exceeded the size limit (16 MiB)") {
		t.Errorf("notices = %q", n.list())
	}
}

// An HTTP server that redirects to another origin: the configured headers (a credential) and
// the client's requests reach the other origin without them.
func TestRedirectElsewhereLosesTheHeaders(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if a := r.Header.Get("Authorization"); a != "" {
			leaked = append(leaked, r.Method+" "+a)
		}
		mu.Unlock()
		http.Error(w, "no token", http.StatusUnauthorized)
	}))
	t.Cleanup(other.Close)
	var own int
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.Header.Get("Authorization") == "Bearer secret" {
			own++
		}
		mu.Unlock()
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(home.Close)
	set, n := open(t, httpConfig("moved", home.URL+"/mcp"))
	set.Snapshot(context.Background())
	waitFor(t, "the notice", func() bool { return hasNotice(n, "MCP server moved is not available") })
	mu.Lock()
	defer mu.Unlock()
	if own == 0 {
		t.Error("the server's own origin never got its header")
	}
	if len(leaked) > 0 {
		t.Errorf("another origin got the credential: %q", leaked)
	}
}
