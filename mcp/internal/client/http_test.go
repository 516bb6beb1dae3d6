package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHTTP is a scripted Streamable HTTP server: it answers initialize with a session id,
// records every request, pushes what the test sends down the standing GET stream, and hands
// every other call to the test's handle.
type fakeHTTP struct {
	t      *testing.T
	handle func(w http.ResponseWriter, r *http.Request, msg wire)
	getOK  bool // offer the standing GET stream (else 405)

	mu      sync.Mutex
	seen    []seenReq
	push    chan string // messages for the GET stream
	got     chan wire   // notifications and answers POSTed by the client
	deleted chan http.Header
	gets    chan struct{} // one per GET stream opened
}

type seenReq struct {
	method string // HTTP method, then the JSON-RPC method
	header http.Header
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, msg wire)) (*fakeHTTP, string) {
	f := &fakeHTTP{t: t, handle: handle, getOK: true, push: make(chan string, 16), got: make(chan wire, 64),
		deleted: make(chan http.Header, 1), gets: make(chan struct{}, 16)}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	return f, ts.URL
}

func (f *fakeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		f.deleted <- r.Header.Clone()
		return
	case http.MethodGet:
		if !f.getOK {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		f.record("GET", r)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		f.gets <- struct{}{}
		for {
			select {
			case m := <-f.push:
				fmt.Fprintf(w, "data: %s\n\n", m)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}
	body, _ := io.ReadAll(r.Body)
	var msg wire
	if err := json.Unmarshal(body, &msg); err != nil {
		f.t.Errorf("the client POSTed %q", body)
		return
	}
	f.record(msg.Method, r)
	switch {
	case msg.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "sess-1")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, initResult)
	case msg.ID == nil || msg.Method == "":
		f.got <- msg
		w.WriteHeader(http.StatusAccepted)
	default:
		f.handle(w, r, msg)
	}
}

func (f *fakeHTTP) record(method string, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, seenReq{method, r.Header.Clone()})
}

func (f *fakeHTTP) requests() []seenReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenReq(nil), f.seen...)
}

// next is the next notification or answer the client POSTed.
func (f *fakeHTTP) next() wire {
	f.t.Helper()
	select {
	case w := <-f.got:
		return w
	case <-time.After(10 * time.Second):
		f.t.Fatal("the client POSTed nothing")
		return wire{}
	}
}

func jsonAnswer(w http.ResponseWriter, msg wire, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
}

// sseAnswer answers over an event stream: first the events before, then the answer.
func sseAnswer(w http.ResponseWriter, msg wire, result string, before ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, b := range before {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
	}
	fmt.Fprintf(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\n", msg.ID)
	fmt.Fprintf(w, "data: \"result\":%s}\n\n", result) // two data lines: one message
}

func connectHTTP(t *testing.T, url string, opts Options) *Session {
	t.Helper()
	s, err := Connect(context.Background(), &HTTP{Endpoint: url, MaxRetries: 1}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The exchange over HTTP: the session id and protocol version on every request after
// initialize, JSON and SSE answers, the server's messages on a POST's stream and on the standing
// GET stream, and a DELETE of the session at Close.
func TestHTTPExchange(t *testing.T) {
	f, url := newFake(t, func(w http.ResponseWriter, r *http.Request, msg wire) {
		switch msg.Method {
		case "tools/list":
			jsonAnswer(w, msg, `{"tools":[{"name":"a"}]}`)
		case "tools/call":
			sseAnswer(w, msg, `{"content":[{"type":"text","text":"streamed"}]}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
				`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`)
		}
	})
	changed := make(chan bool, 1)
	s := connectHTTP(t, url, Options{Info: Info{Name: "agentd", Version: "1"}, ToolsChanged: func() { changed <- true }})
	if w := f.next(); w.Method != "notifications/initialized" {
		t.Fatalf("after initialize the client POSTed %+v", w)
	}
	if tl, err := s.Tools(context.Background(), 10); err != nil || len(tl) != 1 {
		t.Fatalf("tools = %+v, %v", tl, err)
	}
	r, err := s.CallTool(context.Background(), "a", map[string]any{"q": 1})
	if err != nil || r.Content[0].Text != "streamed" {
		t.Fatalf("call = %+v, %v", r, err)
	}
	if ping := f.next(); string(ping.ID) != `"srv-1"` || string(ping.Result) != "{}" {
		t.Errorf("the answer to the server's ping = %+v", ping)
	}
	<-f.gets
	f.push <- `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("list_changed on the GET stream was not reported")
	}
	s.Close()
	select {
	case h := <-f.deleted:
		if h.Get("Mcp-Session-Id") != "sess-1" {
			t.Errorf("DELETE without the session id: %v", h)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close sent no DELETE")
	}
	for i, r := range f.requests() {
		sid, ver := r.header.Get("Mcp-Session-Id"), r.header.Get("Mcp-Protocol-Version")
		if i == 0 {
			if r.method != "initialize" || sid != "" || ver != "" {
				t.Errorf("initialize carried session %q version %q", sid, ver)
			}
			continue
		}
		if sid != "sess-1" || ver != "2025-11-25" {
			t.Errorf("%s carried session %q version %q", r.method, sid, ver)
		}
		if r.method == "GET" {
			if r.header.Get("Accept") != "text/event-stream" {
				t.Errorf("GET Accept = %q", r.header.Get("Accept"))
			}
		} else if r.header.Get("Accept") != "application/json, text/event-stream" || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s Accept %q Content-Type %q", r.method, r.header.Get("Accept"), r.header.Get("Content-Type"))
		}
	}
}

// What a broken or hostile HTTP server does to one call; the session survives all but a lost
// session.
func TestHostileHTTP(t *testing.T) {
	for _, c := range []struct {
		name   string
		handle func(w http.ResponseWriter, r *http.Request, msg wire)
		ctx    time.Duration // the call's timeout, 0 for none
		err    string
		dead   bool
	}{
		{name: "an event stream that never ends", ctx: 200 * time.Millisecond, err: "context deadline exceeded",
			handle: func(w http.ResponseWriter, r *http.Request, msg wire) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
				w.(http.Flusher).Flush()
				<-r.Context().Done() // ends only when the client gives up
			}},
		{name: "an event stream that ends without the answer", err: "ended without the answer",
			handle: func(w http.ResponseWriter, r *http.Request, msg wire) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":12345,\"result\":{}}\n\n")
			}},
		{name: "an event over the limit", err: "exceeded the size limit",
			handle: func(w http.ResponseWriter, r *http.Request, msg wire) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", strings.Repeat("x", 4096))
			}},
		{name: "a JSON answer over the limit", err: "exceeded the size limit",
			handle: func(w http.ResponseWriter, r *http.Request, msg wire) {
				jsonAnswer(w, msg, `{"content":[{"type":"text","text":"`+strings.Repeat("x", 4096)+`"}]}`)
			}},
		{name: "a JSON answer that is not JSON", err: "was not the answer",
			handle: func(w http.ResponseWriter, r *http.Request, msg wire) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, "<html>oops</html>")
			}},
		{name: "another content type", err: `content type "text/html"`,
			handle: func(w http.ResponseWriter, r *http.Request, msg wire) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<html>oops</html>")
			}},
		{name: "a JSON-RPC error with a 400", err: "bad params (JSON-RPC error -32602) (HTTP 400)",
			handle: func(w http.ResponseWriter, r *http.Request, msg wire) {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad params"}}`, msg.ID)
			}},
		{name: "a transient 503", err: "Service Unavailable",
			handle: func(w http.ResponseWriter, r *http.Request, msg wire) { w.WriteHeader(http.StatusServiceUnavailable) }},
		{name: "the session lost", err: "no longer knows the MCP session", dead: true,
			handle: func(w http.ResponseWriter, r *http.Request, msg wire) { w.WriteHeader(http.StatusNotFound) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			first := true
			f, url := newFake(t, func(w http.ResponseWriter, r *http.Request, msg wire) {
				if msg.Method == "tools/call" && first {
					first = false
					c.handle(w, r, msg)
					return
				}
				jsonAnswer(w, msg, `{"content":[{"type":"text","text":"ok"}]}`)
			})
			f.getOK = false
			s := connectHTTP(t, url, Options{MaxMessage: 1024})
			f.next() // initialized
			ctx := context.Background()
			if c.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.ctx)
				defer cancel()
			}
			_, err := s.CallTool(ctx, "t", nil)
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("the call's error = %v, want one containing %q", err, c.err)
			}
			if c.ctx > 0 {
				if n := f.next(); n.Method != "notifications/cancelled" {
					t.Errorf("after the timeout the client POSTed %+v", n)
				}
			}
			if c.dead {
				if err := s.Wait(); !errors.Is(err, ErrSessionMissing) {
					t.Errorf("Wait = %v", err)
				}
				s.Close()
				select {
				case <-f.deleted:
					t.Error("a lost session was DELETEd")
				default:
				}
				return
			}
			if r, err := s.CallTool(context.Background(), "t", nil); err != nil || r.Content[0].Text != "ok" {
				t.Errorf("the call after = %+v, %v", r, err)
			}
		})
	}
}

// The standing stream, as the SDK's client keeps it: ended again and again without a message,
// the session is given up after MaxRetries reopenings; a failed status gives it up at once; a
// server that does not offer one (405) keeps the session.
func TestStandingStream(t *testing.T) {
	defer func(d time.Duration) { reconnectDelay = d }(reconnectDelay)
	reconnectDelay = time.Millisecond
	for _, c := range []struct {
		name string
		get  func(w http.ResponseWriter, n int) // the n-th GET, from 1
		err  string                             // "" means the session lives on
		gets int                                // negative: at least -gets
	}{
		{"it ends at once", func(w http.ResponseWriter, n int) { w.Header().Set("Content-Type", "text/event-stream") },
			"ended or failed 2 times in a row without a message", 2},
		// (A 503 that is not an event stream is "no stream offered", as for the SDK.)
		{"a 503 event stream", func(w http.ResponseWriter, n int) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusServiceUnavailable)
		}, "Service Unavailable", 1},
		{"a 404 on the reconnection", func(w http.ResponseWriter, n int) {
			if n == 1 {
				w.Header().Set("Content-Type", "text/event-stream")
				return
			}
			w.WriteHeader(http.StatusNotFound)
		}, "HTTP 404", 2},
		{"the connection drops", func(w http.ResponseWriter, n int) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, "ended or failed 2 times in a row", -2}, // at least 2: net/http retries a GET on a reused connection once itself
		{"no stream offered", func(w http.ResponseWriter, n int) { w.WriteHeader(http.StatusMethodNotAllowed) }, "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			gets := 0
			got := make(chan struct{}, 8)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					mu.Lock()
					gets++
					n := gets
					mu.Unlock()
					c.get(w, n)
					got <- struct{}{}
					return
				}
				body, _ := io.ReadAll(r.Body)
				var msg wire
				_ = json.Unmarshal(body, &msg)
				if msg.Method == "initialize" {
					jsonAnswer(w, msg, initResult)
					return
				}
				w.WriteHeader(http.StatusAccepted)
			}))
			defer ts.Close()
			s := connectHTTP(t, ts.URL, Options{})
			if c.err == "" {
				<-got
				select {
				case <-s.done:
					t.Fatalf("the session ended: %v", s.err)
				default:
				}
				return
			}
			done := make(chan error, 1)
			go func() { done <- s.Wait() }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("Wait = %v, want an error containing %q", err, c.err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the session outlived its standing stream")
			}
			mu.Lock()
			defer mu.Unlock()
			if gets != c.gets && (c.gets > 0 || gets < -c.gets) {
				t.Errorf("%d GETs, want %d", gets, c.gets)
			}
		})
	}
}

// Close ends a call whose POST the server never answers, and its request: a closed session
// leaves nothing behind (the server's handler sees its request end, and goleak the client's).
func TestCloseEndsAHangingPost(t *testing.T) {
	entered, left := make(chan struct{}), make(chan struct{})
	f, url := newFake(t, func(w http.ResponseWriter, r *http.Request, msg wire) {
		close(entered)
		<-r.Context().Done()
		close(left)
	})
	f.getOK = false
	s := connectHTTP(t, url, Options{})
	call := async(func() (*CallToolResult, error) { return s.CallTool(context.Background(), "t", nil) })
	<-entered
	s.Close()
	if _, err := call(); err == nil {
		t.Error("the call succeeded")
	}
	<-left
}
