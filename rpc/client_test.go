package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/jsonrpc"
)

// testClient is a minimal JSON-RPC peer for server tests: it writes frames, matches responses
// to calls, queues notifications, and answers the server's requests with a handler.
type testClient struct {
	t      *testing.T
	w      io.WriteCloser
	wmu    sync.Mutex
	nextID int

	mu       sync.Mutex
	pending  map[string]chan *wireMsg
	notes    chan *wireMsg
	requests chan *wireMsg
	onCall   func(m *wireMsg) (any, *wireErr) // answers server → client calls; nil: leave them pending
	log      bytes.Buffer
	done     chan struct{}
}

type wireErr struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireErr        `json:"error,omitempty"`
}

func newTestClient(t *testing.T, r io.Reader, w io.WriteCloser) *testClient {
	c := &testClient{t: t, w: w, pending: map[string]chan *wireMsg{}, notes: make(chan *wireMsg, 10000),
		requests: make(chan *wireMsg, 100), done: make(chan struct{})}
	go c.readLoop(bufio.NewReader(r))
	t.Cleanup(func() {
		if t.Failed() {
			c.mu.Lock()
			t.Logf("JSON-RPC log:\n%s", c.log.String())
			c.mu.Unlock()
		}
	})
	return c
}

func (c *testClient) readLoop(r *bufio.Reader) {
	defer close(c.done)
	for {
		body, err := jsonrpc.ReadFrame(r, nil, jsonrpc.MaxContentLength)
		if err != nil {
			return
		}
		c.mu.Lock()
		fmt.Fprintf(&c.log, "<- %s\n", body)
		c.mu.Unlock()
		var m wireMsg
		if err := json.Unmarshal(body, &m); err != nil {
			c.t.Errorf("server wrote a non-JSON frame: %q", body)
			return
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			c.requests <- &m
			if c.onCall != nil {
				res, werr := c.onCall(&m)
				c.respond(m.ID, res, werr)
			}
		case m.Method != "":
			c.notes <- &m
		default:
			c.mu.Lock()
			ch := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- &m
			}
		}
	}
}

func (c *testClient) writeRaw(b []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	fmt.Fprintf(&c.log, "-> %s\n", b)
	c.mu.Unlock()
	fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

func (c *testClient) send(m any) {
	b, err := json.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	c.writeRaw(b)
}

func (c *testClient) respond(id json.RawMessage, res any, werr *wireErr) {
	m := map[string]any{"jsonrpc": "2.0", "id": id}
	if werr != nil {
		m["error"] = werr
	} else {
		m["result"] = res
	}
	c.send(m)
}

// start sends a call and returns its id and the channel its response arrives on.
func (c *testClient) start(method string, params any) (int, chan *wireMsg) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan *wireMsg, 1)
	c.pending[fmt.Sprint(id)] = ch
	c.mu.Unlock()
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
	return id, ch
}

func (c *testClient) wait(ch chan *wireMsg) *wireMsg {
	c.t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(5 * time.Second):
		c.t.Fatal("no response within 5s")
		return nil
	}
}

// call sends a request and waits for its response.
func (c *testClient) call(method string, params any) *wireMsg {
	c.t.Helper()
	_, ch := c.start(method, params)
	return c.wait(ch)
}

func (c *testClient) notify(method string, params any) {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
}

// note waits for the next notification of method, skipping others.
func (c *testClient) note(method string) *wireMsg {
	c.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m := <-c.notes:
			if m.Method == method {
				return m
			}
		case <-deadline:
			c.t.Fatalf("no %s notification within 5s", method)
			return nil
		}
	}
}

func (c *testClient) request(method string) *wireMsg {
	c.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m := <-c.requests:
			if m.Method == method {
				return m
			}
		case <-deadline:
			c.t.Fatalf("no %s request within 5s", method)
			return nil
		}
	}
}

func wantError(t *testing.T, m *wireMsg, code int, contains string) {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("want error %d, got result %s", code, m.Result)
	}
	if m.Error.Code != code || !strings.Contains(m.Error.Message, contains) {
		t.Fatalf("want error %d containing %q, got %d %q", code, contains, m.Error.Code, m.Error.Message)
	}
}

func wantResult(t *testing.T, m *wireMsg, v any) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("want result, got error %d %q", m.Error.Code, m.Error.Message)
	}
	if v != nil {
		if err := json.Unmarshal(m.Result, v); err != nil {
			t.Fatalf("result %s: %v", m.Result, err)
		}
	}
}

// harness runs a Server over pipes.
type harness struct {
	*testClient
	srv    *Server
	code   int
	err    error
	served chan struct{}
	in     *io.PipeWriter
	out    *io.PipeReader
	cancel context.CancelFunc
}

func startServer(t *testing.T, opts Options) *harness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := NewServer(opts)
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{srv: srv, served: make(chan struct{}), in: inW, out: outR, cancel: cancel}
	go func() {
		defer close(h.served)
		h.code, h.err = srv.Serve(ctx, inR, outW)
	}()
	h.testClient = newTestClient(t, outR, inW)
	t.Cleanup(func() {
		inW.Close()
		h.waitExit(t)
		outR.Close()
		<-h.testClient.done
		cancel()
	})
	return h
}

func (h *harness) waitExit(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-h.served:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return within 5s")
	}
	return time.Since(start)
}

func (h *harness) initialize(t *testing.T, params any) *wireMsg {
	t.Helper()
	if params == nil {
		params = map[string]any{"processId": nil, "capabilities": map[string]any{}}
	}
	m := h.call("initialize", params)
	if m.Error == nil {
		h.notify("initialized", map[string]any{})
	}
	return m
}
