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
	"time"
)

// rawHTTP is a raw Streamable HTTP server of the 2025 lifecycle with one tool, t, whose first
// call is answered by hostile; later calls are answered "ok".
func rawHTTP(t *testing.T, hostile func(w http.ResponseWriter, r *http.Request, id json.RawMessage)) string {
	t.Helper()
	var mu sync.Mutex
	calls := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		answer := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
		}
		switch {
		case len(msg.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case msg.Method == "tools/list":
			answer(`{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`)
		case msg.Method == "tools/call":
			mu.Lock()
			calls++
			first := calls == 1
			mu.Unlock()
			if first {
				hostile(w, r, msg.ID)
				return
			}
			answer(`{"content":[{"type":"text","text":"ok"}]}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// What a broken or hostile HTTP server does to one call, through the SDK's client: a clear error
// result naming the server (or the time-out's), and the next call works; a lost session leaves
// the server down. (The cases the deleted mcp/internal/client's TestHostileHTTP covered.)
func TestHostileHTTPServer(t *testing.T) {
	for _, c := range []struct {
		name   string
		handle func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
		err    string
		dead   bool
	}{
		{name: "an event stream that never ends", err: "did not answer within",
			handle: func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}},
		{name: "an event stream that ends without the answer", err: "raw",
			handle: func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":12345,\"result\":{}}\n\n")
			}},
		{name: "an event over the limit", err: "raw",
			handle: func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", strings.Repeat("x", maxMessage+10))
			}},
		{name: "a JSON answer over the limit", err: "exceeded the size limit",
			handle: func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, strings.Repeat("x", maxMessage+10))
			}},
		{name: "a JSON answer that is not JSON", err: "raw",
			handle: func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, "<html>oops</html>")
			}},
		{name: "another content type", err: "raw",
			handle: func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<html>oops</html>")
			}},
		{name: "a JSON-RPC error with a 400", err: "bad params",
			handle: func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad params"}}`, id)
			}},
		{name: "a transient 503", err: "raw",
			handle: func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
				w.WriteHeader(http.StatusServiceUnavailable)
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			timeout := 20 * time.Second // a 16 MiB answer takes its time under -race on a loaded machine
			if strings.Contains(c.err, "did not answer") {
				timeout = time.Second
			}
			cfg := Config{Name: "raw", Type: "http", URL: rawHTTP(t, c.handle), Timeout: timeout}
			set, n := open(t, cfg)
			reg := set.Snapshot(context.Background())
			if _, ok := reg.Lookup("t"); !ok {
				t.Fatalf("no tool; notices %q", n.list())
			}
			first := run(t, reg, "t", `{}`)
			if !first.IsError || !strings.Contains(first.Output, c.err) || !strings.Contains(first.Output, "raw") {
				t.Errorf("the first call = %+v, want an error containing %q", first, c.err)
			}
			if again := run(t, reg, "t", `{}`); again.IsError || again.Output != "ok" {
				t.Errorf("the call after = %+v", again)
			}
		})
	}
}
