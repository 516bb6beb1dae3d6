// Package client is agentd's MCP client: the 2025 lifecycle (initialize, then initialized) over
// stdio (a child's stdin and stdout, a message a line) or Streamable HTTP (a POST a message,
// answered with JSON or an SSE stream, and a standing GET stream for the server's
// notifications), and the few requests agentd makes: tools/list and prompts/list page by page,
// tools/call, prompts/get. It answers the server's ping (and roots/list, with no roots) and
// refuses every other request with method-not-found; it reports tools and prompts
// list_changed notifications; a call whose context ends is retired at once and the server is
// sent notifications/cancelled. It is on the wire as the official Go SDK's client, which it
// replaces in production for the SDK's cost at every start (docs/ARCHITECTURE.md, "Our own MCP
// client"); the SDK stays in the tests, as the servers this client is checked against.
//
// Everything a server sends is bounded (a message is at most MaxMessage bytes) and untrusted:
// a line that is not JSON, an answer to an id never sent or to a call already given up, and an
// error of the wrong shape are logged and dropped, never fatal to the caller. Cleaning the
// strings a server supplies is the caller's job (package mcp's Clean).
package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// MaxMessage bounds one message from a server (a stdio line, a JSON body, an SSE event), as the
// SDK's stdio and SSE readers do.
const MaxMessage = 16 << 20

// ErrClosed is the error of a call on a session that was closed.
var ErrClosed = errors.New("the MCP session is closed")

// Options configure a session.
type Options struct {
	Info Info // the client's name and version, sent in initialize
	// ToolsChanged and PromptsChanged are called (on the reading goroutine, so briefly) when
	// the server says its tools or prompts changed.
	ToolsChanged, PromptsChanged func()
	// Log reports what was dropped from the server (a message that is not JSON, an answer
	// nobody waits for); nil logs nothing.
	Log func(msg string, err error)
	// MaxMessage bounds one message from the server; 0 means MaxMessage.
	MaxMessage int
}

// Transport is how a session reaches its server: Stdio or HTTP.
type Transport interface {
	connect(ctx context.Context, s *Session) (conn, error)
}

// conn is a connected transport. send writes one message; a call's answer (id > 0) arrives
// through the session's receive, as everything else the server sends. initialized gives it the
// negotiated version, ready says the handshake is over. close ends the connection and reaps what it
// started; it is idempotent.
type conn interface {
	send(ctx context.Context, msg []byte, id int64) error
	initialized(version string)
	ready()
	close() error
}

// Session is one connection to one server, initialized.
type Session struct {
	opts Options
	conn conn
	init *InitializeResult

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan answer
	logged  int // drops logged

	doneOnce sync.Once
	done     chan struct{}
	err      error // why the session ended; set before done is closed
}

// Connect connects through t, runs the initialize handshake bounded by ctx, and returns the
// session ready for calls. A server whose version this client does not speak is refused.
func Connect(ctx context.Context, t Transport, opts Options) (*Session, error) {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = MaxMessage
	}
	s := &Session{opts: opts, pending: map[int64]chan answer{}, done: make(chan struct{})}
	c, err := t.connect(ctx, s)
	if err != nil {
		return nil, err
	}
	s.conn = c
	var res InitializeResult
	params := map[string]any{"protocolVersion": versions[0], "capabilities": struct{}{}, "clientInfo": opts.Info}
	if err := s.call(ctx, "initialize", params, &res); err != nil {
		s.Close()
		var rpc *Error
		if errors.As(err, &rpc) && rpc.Code == CodeMethodNotFound {
			// A server of the 2026-07-28 revision only (no initialize, server/discover instead).
			return nil, fmt.Errorf("%w; the server may speak only MCP's 2026-07-28 revision, which this client does not", err)
		}
		return nil, err
	}
	if !slices.Contains(versions, res.ProtocolVersion) {
		s.Close()
		return nil, fmt.Errorf("the server answered with protocol version %q, which this client does not speak (it speaks %v)", res.ProtocolVersion, versions)
	}
	s.init = &res
	// As the SDK: the version is on the initialized notification already.
	c.initialized(res.ProtocolVersion)
	if err := s.notify(ctx, "notifications/initialized", struct{}{}); err != nil {
		s.Close()
		return nil, err
	}
	c.ready()
	return s, nil
}

// InitializeResult is the server's answer to initialize.
func (s *Session) InitializeResult() *InitializeResult { return s.init }

// Wait blocks until the session ends (the server exited or closed its output, the HTTP session
// was lost, or Close) and says why.
func (s *Session) Wait() error {
	<-s.done
	return s.err
}

// Close ends the session: the transport's close (stdio: the child's stdin closed, then the
// child waited for, with escalation; HTTP: a DELETE of the session), and every pending call
// fails.
func (s *Session) Close() error {
	s.end(ErrClosed)
	if s.conn != nil {
		return s.conn.close()
	}
	return nil
}

// end marks the session over with err (the first reason wins) and fails the pending calls.
func (s *Session) end(err error) {
	s.doneOnce.Do(func() {
		s.err = err
		close(s.done)
	})
}
