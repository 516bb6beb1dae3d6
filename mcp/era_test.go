package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// refusing serves srv over Streamable HTTP on 127.0.0.1, answering the requests named in refuse
// with method-not-found, as a server of one era answers the other era's handshake. (The SDK's
// server speaks the 2026-07-28 revision over HTTP only when stateless.)
func refusing(t *testing.T, srv *sdk.Server, refuse string) string {
	t.Helper()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: refuse == "initialize"})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == refuse && len(msg.ID) > 0 {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found: %s"}}`, msg.ID, refuse)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// negotiated is the protocol version the set's first server agreed on.
func negotiated(t *testing.T, set *Set) string {
	t.Helper()
	sv := set.servers[0]
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.cs == nil {
		t.Fatalf("the server is %s: %v", sv.state, sv.err)
	}
	return sv.cs.InitializeResult().ProtocolVersion
}

// A server of the 2026-07-28 revision only (it refuses initialize) and a server of the 2025
// lifecycle only (it does not know server/discover) both serve their tools: the client asks
// server/discover first and falls back to initialize.
func TestBothProtocolEras(t *testing.T) {
	for _, c := range []struct {
		refuse string
		modern bool
	}{{"initialize", true}, {"server/discover", false}} {
		t.Run("refusing "+c.refuse, func(t *testing.T) {
			url := refusing(t, echoServer("era", "hello"), c.refuse)
			set, n := open(t, Config{Name: "era", Type: "http", URL: url, Timeout: DefaultTimeout})
			reg := set.Snapshot(context.Background())
			if _, ok := reg.Lookup("hello"); !ok {
				t.Fatalf("no tool; notices %q", n.list())
			}
			if r := run(t, reg, "hello", `{}`); r.IsError || r.Output != "era ran hello" {
				t.Errorf("call = %+v", r)
			}
			v := negotiated(t, set)
			if modern := v >= "2026-07-28"; modern != c.modern {
				t.Errorf("negotiated %q; want the modern revision: %v", v, c.modern)
			}
		})
	}
}

// A stdio server of the SDK (both eras) is reached through the 2026-07-28 revision.
func TestStdioNegotiatesTheNewestRevision(t *testing.T) {
	set, _ := open(t, stdioConfig("hostile", "-many", "0"))
	set.Snapshot(context.Background())
	if v := negotiated(t, set); v < "2026-07-28" {
		t.Errorf("negotiated %q over stdio", v)
	}
}

// A server that still has only the old HTTP+SSE transport (entry type "sse") serves its tools,
// with the configured headers.
func TestOldSSETransport(t *testing.T) {
	srv := echoServer("old", "legacy_tool")
	h := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	cfgs, err := ParseList("mcpServers", []json.RawMessage{json.RawMessage(`{"type":"sse","name":"old","url":"` + ts.URL + `","headers":[{"name":"Authorization","value":"Bearer secret"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	set, n := open(t, cfgs...)
	reg := set.Snapshot(context.Background())
	if r := run(t, reg, "legacy_tool", `{}`); r.IsError || !strings.Contains(r.Output, "old ran legacy_tool") {
		t.Errorf("call = %+v; notices %q", r, n.list())
	}
	if st := set.Status(); len(st) != 1 || st[0].Type != "sse" || st[0].State != StateReady {
		t.Errorf("status = %+v", st)
	}
}

// A 2025 server that never answers server/discover (it ignores what it does not know) still
// starts, through initialize, well within the start's time-out: the discovery is bounded.
func TestSilentDiscoverFallsBack(t *testing.T) {
	old := discoverTimeout
	discoverTimeout = time.Second
	t.Cleanup(func() { discoverTimeout = old })
	p := NewPool(nil)
	p.StartTimeout = 10 * time.Second
	t.Cleanup(p.Close)
	began := time.Now()
	set := p.Open([]Config{stdioConfig("raw", "-raw", "silentdiscover")}, builtin(), nil)
	reg := set.Snapshot(context.Background())
	if _, ok := reg.Lookup("t"); !ok {
		t.Fatalf("no tool: %v", set.Status())
	}
	if took := time.Since(began); took > discoverTimeout+2*time.Second {
		t.Errorf("the start took %s", took)
	}
	if r := run(t, reg, "t", `{}`); r.IsError {
		t.Errorf("call = %+v", r)
	}
}

// Closing the pool leaves nothing running of agentd's: no goroutine of the SDK's sessions, the
// readers, the reapers or the stderr loggers (stdio, Streamable HTTP and SSE servers alike).
func TestCloseLeavesNoGoroutines(t *testing.T) {
	srv := echoServer("g", "g_tool")
	h := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	sse := httptest.NewServer(h)
	streamable := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return echoServer("s", "s_tool") }, nil))
	defer sse.Close()
	defer streamable.Close()
	ignore := goleak.IgnoreCurrent()
	p := NewPool(nil)
	set := p.Open([]Config{
		stdioConfig("hostile", "-many", "0"),
		{Name: "old", Type: "http", SSE: true, URL: sse.URL, Timeout: DefaultTimeout},
		{Name: "new", Type: "http", URL: streamable.URL, Timeout: DefaultTimeout},
	}, builtin(), nil)
	reg := set.Snapshot(context.Background())
	for _, name := range []string{"echo", "g_tool", "s_tool"} {
		if _, ok := reg.Lookup(name); !ok {
			t.Fatalf("no %s: %v", name, set.Status())
		}
	}
	set.Close()
	p.Close()
	sse.CloseClientConnections()
	streamable.CloseClientConnections()
	if err := goleak.Find(ignore, goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"), goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"), goleak.IgnoreAnyFunction("internal/poll.runtime_pollWait")); err != nil {
		t.Error(err)
	}
}
