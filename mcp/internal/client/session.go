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
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// MaxMessage bounds one message from a server (a stdio line, a JSON body, an SSE event), as the
// SDK's stdio and SSE readers do.
const MaxMessage = 16 << 20

// maxPages bounds the pages of one listing: a server that hands out cursors forever is listed
// no further.
const maxPages = 100

// cancelTimeout bounds the notifications/cancelled sent for a call given up (the SDK's 5 s).
const cancelTimeout = 5 * time.Second

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
// through the session's receive, as everything else the server sends. initialized says the
// handshake is done, with the negotiated version. close ends the connection and reaps what it
// started; it is idempotent.
type conn interface {
	send(ctx context.Context, msg []byte, id int64) error
	initialized(version string)
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
	// As the SDK: the version is on the initialized notification already, and the standing
	// stream opens with it.
	c.initialized(res.ProtocolVersion)
	if err := s.notify(ctx, "notifications/initialized", struct{}{}); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// InitializeResult is the server's answer to initialize.
func (s *Session) InitializeResult() *InitializeResult { return s.init }

// Tools lists the server's tools, page by page, at most max of them (and maxPages pages).
func (s *Session) Tools(ctx context.Context, max int) ([]Tool, error) {
	return list(ctx, max, func(cursor string) ([]Tool, string, error) {
		var r listToolsResult
		err := s.call(ctx, "tools/list", cursorParams(cursor), &r)
		return r.Tools, r.NextCursor, err
	})
}

// Prompts lists the server's prompts as Tools lists its tools.
func (s *Session) Prompts(ctx context.Context, max int) ([]Prompt, error) {
	return list(ctx, max, func(cursor string) ([]Prompt, string, error) {
		var r listPromptsResult
		err := s.call(ctx, "prompts/list", cursorParams(cursor), &r)
		return r.Prompts, r.NextCursor, err
	})
}

func cursorParams(cursor string) map[string]any {
	if cursor == "" {
		return map[string]any{}
	}
	return map[string]any{"cursor": cursor}
}

func list[T any](ctx context.Context, max int, page func(cursor string) ([]T, string, error)) ([]T, error) {
	var out []T
	cursor := ""
	for range maxPages {
		items, next, err := page(cursor)
		if err != nil {
			return out, err
		}
		for _, it := range items {
			if len(out) == max {
				return out, nil
			}
			out = append(out, it)
		}
		if next == "" || len(out) == max {
			break
		}
		cursor = next
	}
	return out, nil
}

// CallTool calls a tool. A tool's own failure is a result with IsError; an error is the
// protocol's or the connection's (or ctx's, after notifications/cancelled was sent).
func (s *Session) CallTool(ctx context.Context, name string, args map[string]any) (*CallToolResult, error) {
	if args == nil {
		args = map[string]any{} // the SDK's rule: never null on the wire
	}
	var r CallToolResult
	if err := s.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// GetPrompt renders a prompt with its arguments.
func (s *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (*GetPromptResult, error) {
	var r GetPromptResult
	if err := s.call(ctx, "prompts/get", map[string]any{"name": name, "arguments": args}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

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

// call sends a request and waits for its answer, ctx's end, or the session's.
func (s *Session) call(ctx context.Context, method string, params, result any) error {
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	ch := make(chan answer, 1)
	s.pending[id] = ch
	s.mu.Unlock()
	msg, err := json.Marshal(message{JSONRPC: "2.0", ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: params})
	if err != nil {
		s.retire(id)
		return fmt.Errorf("calling %q: %w", method, err)
	}
	if err := s.conn.send(ctx, msg, id); err != nil {
		s.retire(id)
		if ctx.Err() != nil {
			go s.cancelled(ctx, id)
			return ctx.Err()
		}
		return fmt.Errorf("calling %q: %w", method, err)
	}
	select {
	case a := <-ch:
		if a.err != nil {
			return fmt.Errorf("calling %q: %w", method, a.err)
		}
		in := a.in
		if len(in.Error) > 0 && string(in.Error) != "null" {
			return fmt.Errorf("calling %q: %w", method, rpcError(in.Error))
		}
		if result != nil {
			if err := json.Unmarshal(in.Result, result); err != nil {
				return fmt.Errorf("calling %q: the server's result does not decode: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		s.retire(id)
		go s.cancelled(ctx, id)
		return ctx.Err()
	case <-s.done:
		s.retire(id)
		return fmt.Errorf("calling %q: the connection ended: %w", method, s.err)
	}
}

// rpcError decodes a response's error member; one of the wrong shape is still an error, with
// its text.
func rpcError(raw json.RawMessage) *Error {
	var e Error
	if json.Unmarshal(raw, &e) != nil || e.Message == "" && e.Code == 0 {
		txt := string(raw)
		if len(txt) > 200 {
			txt = txt[:200]
		}
		return &Error{Message: "malformed error " + strconv.Quote(txt)}
	}
	return &e
}

// cancelled tells the server a call was given up (best effort, bounded, off the caller's path).
func (s *Session) cancelled(ctx context.Context, id int64) {
	select {
	case <-s.done:
		return
	default:
	}
	nctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer stop()
	reason := "context canceled"
	if err := ctx.Err(); err != nil {
		reason = err.Error()
	}
	_ = s.notify(nctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": reason})
}

// answer is what a call gets: the server's response, or the transport's reason there is none.
type answer struct {
	in  incoming
	err error
}

// waiting reports whether call id still waits for its answer.
func (s *Session) waiting(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pending[id]
	return ok
}

// deliverError fails call id, if it still waits, with the transport's reason.
func (s *Session) deliverError(id int64, reason string) {
	s.mu.Lock()
	ch, ok := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if ok {
		ch <- answer{err: errors.New(reason)}
	}
}

func (s *Session) retire(id int64) {
	s.mu.Lock()
	delete(s.pending, id)
	s.mu.Unlock()
}

func (s *Session) notify(ctx context.Context, method string, params any) error {
	msg, err := json.Marshal(message{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	return s.conn.send(ctx, msg, 0)
}

// maxLogged bounds what one session logs of what it dropped: a server that floods its output
// with garbage must not flood agentd's log too.
const maxLogged = 100

func (s *Session) log(msg string, err error) {
	if s.opts.Log == nil {
		return
	}
	s.mu.Lock()
	s.logged++
	n := s.logged
	s.mu.Unlock()
	switch {
	case n < maxLogged:
		s.opts.Log(msg, err)
	case n == maxLogged:
		s.opts.Log(msg+"; what this server sends wrong is no longer logged", err)
	}
}

// receive takes one message from the server: an answer goes to its caller, a notification to
// its handler, a request gets its answer. What is malformed or unexpected is logged and dropped.
func (s *Session) receive(raw []byte) {
	var in incoming
	if err := json.Unmarshal(raw, &in); err != nil {
		s.log("dropped a message from the MCP server that is not a JSON-RPC object", err)
		return
	}
	hasID := len(in.ID) > 0 && string(in.ID) != "null"
	switch {
	case in.Method != "" && hasID:
		s.answer(in)
	case in.Method != "":
		switch in.Method {
		case "notifications/tools/list_changed":
			if s.opts.ToolsChanged != nil {
				s.opts.ToolsChanged()
			}
		case "notifications/prompts/list_changed":
			if s.opts.PromptsChanged != nil {
				s.opts.PromptsChanged()
			}
		}
	case hasID:
		id, err := strconv.ParseInt(string(in.ID), 10, 64)
		s.mu.Lock()
		ch, ok := s.pending[id]
		delete(s.pending, id)
		s.mu.Unlock()
		if err != nil || !ok {
			s.log("dropped an answer to no pending call (id "+clipID(in.ID)+")", nil)
			return
		}
		ch <- answer{in: in}
	default:
		s.log("dropped a message from the MCP server that is neither a request nor an answer", nil)
	}
}

func clipID(id json.RawMessage) string {
	if len(id) > 40 {
		return string(id[:40]) + "…"
	}
	return string(id)
}

// answer replies to a request from the server: ping, roots/list (there are none: the client
// declares no roots), and method-not-found for the rest, as the SDK's client without handlers.
func (s *Session) answer(in incoming) {
	reply := message{JSONRPC: "2.0", ID: in.ID}
	switch in.Method {
	case "ping":
		reply.Result = json.RawMessage(`{}`)
	case "roots/list":
		reply.Result = json.RawMessage(`{"roots":[]}`)
	default:
		reply.Error = &Error{Code: CodeMethodNotFound, Message: "method not found: " + strconv.Quote(clipMethod(in.Method))}
	}
	msg, err := json.Marshal(reply)
	if err != nil {
		return
	}
	ctx, stop := context.WithTimeout(context.Background(), cancelTimeout)
	defer stop()
	if err := s.conn.send(ctx, msg, 0); err != nil {
		s.log("answering the MCP server's "+strconv.Quote(clipMethod(in.Method))+" failed", err)
	}
}

func clipMethod(m string) string {
	if len(m) > 64 {
		return m[:64]
	}
	return m
}
