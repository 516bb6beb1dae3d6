package client

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
)

// pipeTransport is stdio without a process: the test is the server, at the other end of two
// in-memory pipes.
type pipeTransport struct {
	r io.Reader
	w io.WriteCloser
}

func (p pipeTransport) connect(_ context.Context, s *Session) (conn, error) {
	return startStdio(s, nil, p.r, p.w, 0), nil
}

// peer is the server's end: it reads the client's messages a line at a time and writes lines.
type peer struct {
	t   *testing.T
	in  *bufio.Reader
	out *io.PipeWriter
	wmu sync.Mutex
}

// wire is a message as the peer reads it.
type wire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

func (p *peer) recv() wire {
	p.t.Helper()
	line, err := p.in.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("the peer's read: %v", err)
	}
	var w wire
	if err := json.Unmarshal(line, &w); err != nil {
		p.t.Fatalf("the client sent %q: %v", line, err)
	}
	return w
}

// expect reads the next message and checks its method.
func (p *peer) expect(method string) wire {
	p.t.Helper()
	w := p.recv()
	if w.Method != method {
		p.t.Fatalf("the client sent %q (%s), want %q", w.Method, w.Params, method)
	}
	return w
}

func (p *peer) send(format string, args ...any) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, _ = fmt.Fprintf(p.out, format+"\n", args...)
}

// answer replies to w with result (JSON text).
func (p *peer) answer(w wire, result string) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(result)); err != nil {
		p.t.Errorf("the test's result %q: %v", result, err)
	}
	p.send(`{"jsonrpc":"2.0","id":%s,"result":%s}`, w.ID, b.Bytes())
}

// logs collects what a session drops.
type logs struct {
	mu  sync.Mutex
	all []string
}

func (l *logs) log(msg string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, fmt.Sprintf("%s: %v", msg, err))
}

func (l *logs) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.all {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

const initResult = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"prompts":{}},"serverInfo":{"name":"fake","version":"1"}}`

// connectPipe connects a session to a peer, runs the handshake as the server, and returns both.
func connectPipe(t *testing.T, opts Options) (*Session, *peer) {
	t.Helper()
	c2s, c2sw := io.Pipe()
	s2c, s2cw := io.Pipe()
	p := &peer{t: t, in: bufio.NewReader(c2s), out: s2cw}
	if opts.Log == nil {
		opts.Log = (&logs{}).log
	}
	type result struct {
		s   *Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Connect(context.Background(), pipeTransport{r: s2c, w: c2sw}, opts)
		done <- result{s, err}
	}()
	init := p.expect("initialize")
	var params struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      Info            `json:"clientInfo"`
	}
	if err := json.Unmarshal(init.Params, &params); err != nil {
		t.Fatal(err)
	}
	// The SDK's client sends the same: the newest 2025 revision, no capabilities, its name.
	if params.ProtocolVersion != "2025-11-25" || string(params.Capabilities) != "{}" || params.ClientInfo.Name != opts.Info.Name {
		t.Fatalf("initialize params = %s", init.Params)
	}
	p.answer(init, initResult)
	p.expect("notifications/initialized")
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() {
		r.s.Close()
		s2cw.Close()
		c2s.Close()
	})
	return r.s, p
}

// async runs f in the background; the returned function waits for its result.
func async[T any](f func() (T, error)) func() (T, error) {
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	go func() { v, err := f(); ch <- res{v, err} }()
	return func() (T, error) {
		select {
		case r := <-ch:
			return r.v, r.err
		case <-time.After(2 * time.Minute): // a guard against a hang, not a timing assertion
			var zero T
			return zero, fmt.Errorf("no result after 2 minutes")
		}
	}
}
