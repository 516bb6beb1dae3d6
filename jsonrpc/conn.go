package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/protocol"
)

// DefaultCallTimeout is the deadline of an outgoing request whose context has none, so a peer
// that never answers cannot hold the caller forever.
const DefaultCallTimeout = 30 * time.Second

// Handler handles one incoming request or notification on the reading goroutine, in the order
// they arrive: the next message is not read before it returns. A call is answered with what it
// returns (a *WireError answers with its code; see toWireError for other errors), unless the
// result is a Later, which finishes the call on a goroutine of its own while reading goes on.
// A notification's result is dropped; its error is logged. A panic is answered -32603 and
// logged; the connection keeps serving.
type Handler func(ctx context.Context, req *Request) (any, error)

// Later is a Handler's result that finishes the request on a goroutine of its own: the work a
// handler must do in order (checks, bookkeeping that later messages rely on) happens before it
// returns a Later, and the rest, which may wait on the peer (a call back to it is answered only
// once reading goes on), runs in the Later. The request is answered with what the Later
// returns.
type Later func() (any, error)

// Preempter sees every incoming request before its Handler, on the reading goroutine, ahead of
// everything queued behind it ($/cancelRequest). A result other than (nil, nil) or
// ErrNotHandled answers the request there, and the Handler never sees it.
type Preempter interface {
	Preempt(ctx context.Context, req *Request) (any, error)
}

// ErrNotHandled is what a Preempter returns for a request it leaves to the Handler.
var ErrNotHandled = errors.New("jsonrpc: request not handled")

// ErrClosing is the error of a call, notification or answer once the connection is ending (the
// input ended, a write failed, or Close was called), possibly wrapping the cause.
var ErrClosing = errors.New("jsonrpc: connection is closing")

// MethodNotFoundHandler answers every call -32601 and drops notifications: the handler of a
// peer that serves nothing.
func MethodNotFoundHandler(_ context.Context, req *Request) (any, error) {
	if !req.IsCall() {
		return nil, nil
	}
	return nil, Errorf(MethodNotFound, "%q: JSON-RPC method not found", req.Method())
}

// Options configure a Conn.
type Options struct {
	Logger *zap.Logger
	// Preempter answers requests on the read goroutine, ahead of everything queued behind them
	// ($/cancelRequest).
	Preempter Preempter
	// CallTimeout is the deadline of a call whose context has none: 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// Timeout, when set, gives the deadline per method instead (read when the call starts, so
	// it may follow settings); a value ≤ 0 means no deadline.
	Timeout func(method string) time.Duration
	// OnReadEnd is called once with the error that ends reading (io.EOF for a clean end).
	OnReadEnd func(err error)
	// Trace sees the body of every frame read (incoming) and queued, for a test's message log.
	Trace func(incoming bool, body []byte)
	// NDJSON frames each message as one line of JSON instead of an LSP header block (ACP).
	NDJSON bool
	// Translate, when set, rewrites each message body: incoming bodies after they are read and
	// before they are decoded, outgoing bodies after they are encoded. It lets a second wire
	// (ACP) reuse this connection with other method names; a nil result drops the message.
	Translate func(incoming bool, body []byte) []byte
}

// Conn is one JSON-RPC 2.0 connection over a Stream, symmetric like the protocol: it serves the
// peer's requests with a Handler and makes requests of its own (Call, Notify), with the house's
// rules for outgoing requests. It implements editorbridge.Conn.
//
// One goroutine reads (Go), for the connection's life: it decodes each message, runs the
// Preempter and the Handler in arrival order, and hands answers to the calls waiting for them.
// A Handler that returns a Later gets a goroutine of its own for the rest.
//
// When reading ends (the end of input, a framing error, the stream closed), every call still
// waiting fails with that error, nothing more is written but session updates already queued,
// and the connection ends (Done) once the requests in progress have returned.
type Conn struct {
	stream    *Stream
	log       *zap.Logger
	timeout   func(method string) time.Duration
	preempter Preempter
	handler   Handler

	mu           sync.Mutex
	seq          int64
	pending      map[int64]chan answer // calls waiting for their answer
	handling     int                   // requests read and not yet finished
	reading      bool
	readErr      error // what ended reading
	writeErr     error // the first failed write
	closing      bool  // Close was called
	closeStarted bool
	closeDone    bool
	closeErr     error
	done         chan struct{} // closed once reading and every request have ended, and the stream is closed

	// beforeAnswer, set only by tests, runs once a call's answer is encoded and before it is
	// queued: the window Supersede closes.
	beforeAnswer func(req *Request)
}

// answer is what a call waiting in pending receives.
type answer struct {
	result json.RawMessage
	err    error // the peer's *WireError, or what ended reading
}

// NewConn makes a connection over r and w; Go starts reading. r and w may be the same value.
func NewConn(r io.ReadCloser, w io.WriteCloser, o Options) *Conn {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Timeout == nil {
		d := o.CallTimeout
		o.Timeout = func(string) time.Duration { return d }
	}
	s := NewStream(r, w, o.Logger)
	s.onRead, s.trace = o.OnReadEnd, o.Trace
	s.ndjson, s.translate = o.NDJSON, o.Translate
	return &Conn{stream: s, log: o.Logger, timeout: o.Timeout, preempter: o.Preempter,
		pending: map[int64]chan answer{}, done: make(chan struct{})}
}

// Go starts reading and dispatching incoming messages to handler; ctx is the context every
// handler gets. It must be called once.
func (c *Conn) Go(ctx context.Context, handler Handler) {
	c.handler = handler
	c.mu.Lock()
	c.reading = true
	c.mu.Unlock()
	go c.read(ctx)
}

// read is the reading goroutine.
func (c *Conn) read(ctx context.Context) {
	var err error
	for {
		var msg *message
		if msg, err = c.stream.read(); err != nil {
			break
		}
		if msg.isReq {
			c.dispatch(ctx, &msg.req)
		} else {
			c.deliver(msg)
		}
	}
	c.mu.Lock()
	c.reading = false
	c.readErr = err
	// Nothing can answer the calls still waiting: they fail with what ended reading.
	for id, ch := range c.pending {
		ch <- answer{err: err}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	c.settle()
}

// deliver hands an answer to the call waiting for it; an answer to an id nobody waits for (a
// call already given up, or never made) is dropped.
func (c *Conn) deliver(msg *message) {
	n, ok := msg.id.Number()
	if !ok {
		return
	}
	c.mu.Lock()
	ch := c.pending[n]
	delete(c.pending, n)
	c.mu.Unlock()
	if ch == nil {
		return
	}
	if msg.err != nil {
		ch <- answer{err: msg.err}
	} else {
		ch <- answer{result: msg.result}
	}
	c.settle()
}

// dispatch runs one request through the preempter and the handler.
func (c *Conn) dispatch(ctx context.Context, req *Request) {
	c.mu.Lock()
	c.handling++
	shut := c.closingLocked()
	c.mu.Unlock()
	defer c.finish()
	if c.preempter != nil {
		res, err := c.guard(req, func() (any, error) { return c.preempter.Preempt(ctx, req) })
		if !errors.Is(err, ErrNotHandled) && (res != nil || err != nil) {
			c.reply(req, res, err)
			return
		}
	}
	if shut != nil && req.call {
		c.reply(req, nil, shut) // not written: the connection is ending
		return
	}
	res, err := c.guard(req, func() (any, error) { return c.handler(ctx, req) })
	if later, ok := res.(Later); ok && err == nil {
		c.mu.Lock()
		c.handling++
		c.mu.Unlock()
		go c.finishLater(req, later)
		return
	}
	c.reply(req, res, err)
}

// finishLater runs the rest of a request on its own goroutine and answers it.
func (c *Conn) finishLater(req *Request, later Later) {
	defer c.finish()
	res, err := c.guard(req, later)
	c.reply(req, res, err)
}

// guard runs f, turning a panic into a -32603 answer.
func (c *Conn) guard(req *Request, f func() (any, error)) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("handler panicked", zap.String("method", req.method), zap.Any("panic", r), zap.Stack("stack"))
			res, err = nil, Errorf(InternalError, "jsonrpc: handler panicked: %v", r)
		}
	}()
	return f()
}

// finish notes the end of one request.
func (c *Conn) finish() {
	c.mu.Lock()
	c.handling--
	c.mu.Unlock()
	c.settle()
}

// reply answers a call with res or err (a notification's error is logged). Once the connection
// is ending, answers are no longer written.
func (c *Conn) reply(req *Request, res any, err error) {
	if !req.call {
		if err != nil {
			c.log.Warn("notification failed", zap.String("method", req.method), zap.Error(err))
		}
		return
	}
	var result []byte
	var werr *WireError
	if err != nil {
		werr = toWireError(err)
	} else if result, err = marshal(res); err != nil {
		werr = Errorf(InternalError, "jsonrpc: marshaling the result: %v", err)
	}
	c.mu.Lock()
	shut := c.closingLocked()
	c.mu.Unlock()
	if shut != nil {
		c.log.Debug("answer not written", zap.String("method", req.method), zap.Error(shut))
		return
	}
	if c.beforeAnswer != nil {
		c.beforeAnswer(req)
	}
	c.wrote(c.stream.writeResponse(req.id, result, werr))
}

// wrote records a failed write: the peer can no longer be answered, so the connection ends.
func (c *Conn) wrote(err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	if c.writeErr == nil {
		c.writeErr = err
	}
	c.mu.Unlock()
	c.settle()
}

// closingLocked returns the error that refuses new work once the connection is ending.
func (c *Conn) closingLocked() error {
	switch {
	case c.closing:
		return ErrClosing
	case c.readErr != nil:
		return fmt.Errorf("%w: %w", ErrClosing, c.readErr)
	case c.writeErr != nil:
		return fmt.Errorf("%w: %w", ErrClosing, c.writeErr)
	}
	return nil
}

// settle ends the connection once it is ending and idle: no request is running and no call
// waits. It closes the stream (which ends a read in progress) and, once reading has also ended,
// Done.
func (c *Conn) settle() {
	c.mu.Lock()
	closeNow := !c.closeStarted && c.handling == 0 && len(c.pending) == 0 && c.closingLocked() != nil
	if closeNow {
		c.closeStarted = true
	}
	c.mu.Unlock()
	if closeNow {
		err := c.stream.Close()
		c.mu.Lock()
		c.closeErr, c.closeDone = err, true
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeDone && !c.reading {
		select {
		case <-c.done:
		default:
			close(c.done)
		}
	}
}

// Close stops taking new work, waits for the requests in progress and the calls waiting, closes
// the stream and waits for the connection to end. It returns the stream's close error.
func (c *Conn) Close() error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.settle()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// CloseStream closes the transport under the connection without waiting for its handlers, so a
// reader blocked mid-frame and a writer blocked on a peer that stopped reading both return.
func (c *Conn) CloseStream() error { return c.stream.Close() }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is the error that ended the connection, nil for a clean end (the end of input, closing
// it ourselves).
func (c *Conn) Err() error {
	c.mu.Lock()
	var err error
	switch {
	case c.writeErr != nil:
		err = c.writeErr
	case c.readErr != nil && !errors.Is(c.readErr, io.EOF):
		err = c.readErr
	default:
		err = c.closeErr
	}
	c.mu.Unlock()
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, io.ErrClosedPipe), errors.Is(err, os.ErrClosed),
		errors.Is(err, net.ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, ErrClosing):
		return nil
	}
	return err
}

// AfterAnswer runs fn once the answer to the peer's request id is queued; see
// Stream.AfterAnswer.
func (c *Conn) AfterAnswer(id ID, fn func()) { c.stream.AfterAnswer(id, fn) }

// Supersede makes the peer's request id the newest of key: the answer to the request of the same
// key before it, when it is not queued yet, is instead (a JSON value; nil means null), however
// late its handler returns. It is meant for the reading goroutine, as it reads id, so an answer
// the older handler gives after that is never written; see Stream.Supersede.
func (c *Conn) Supersede(key string, id ID, instead json.RawMessage) {
	c.stream.Supersede(key, id, instead)
}

// Error is an error answer from the peer.
type Error struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *Error) Error() string { return fmt.Sprintf("editor error %d: %s", e.Code, e.Message) }

// ErrNoAnswer is the cause of a call that reached its timeout without an answer.
var ErrNoAnswer = errors.New("no answer")

// Call sends a request and waits for the answer. Without a deadline on ctx it gets the method's
// timeout; a call that reaches it fails with an error wrapping ErrNoAnswer and
// context.DeadlineExceeded that says how long it waited. When ctx ends first, the peer is told
// with $/cancelRequest and ctx's error is returned. An error answer is returned as *Error; the
// end of the input fails every call still waiting with what ended it.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	var limit time.Duration
	if _, ok := ctx.Deadline(); !ok {
		if limit = c.timeout(method); limit > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, limit, ErrNoAnswer)
			defer cancel()
		}
	}
	raw, err := marshal(params)
	if err != nil {
		return fmt.Errorf("%s: jsonrpc: marshaling the params: %w", method, err)
	}
	ch := make(chan answer, 1)
	c.mu.Lock()
	if err := c.closingLocked(); err != nil {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	c.seq++
	n := c.seq
	c.pending[n] = ch
	c.mu.Unlock()

	if err := c.stream.writeCall(NewNumberID(n), method, raw); err != nil {
		c.forget(n)
		c.wrote(err)
		return fmt.Errorf("%s: %w", method, err)
	}
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		if !c.forget(n) {
			<-ch // delivered meanwhile; the caller gave up all the same
		}
		// The answer no longer matters; tell the peer to stop working on it.
		if nerr := c.notify("$/cancelRequest", cancelParams{ID: NewNumberID(n)}); nerr != nil {
			c.log.Debug("$/cancelRequest not sent", zap.String("method", method), zap.Error(nerr))
		}
		if context.Cause(ctx) == ErrNoAnswer {
			return fmt.Errorf("%s: %w within %v (%w)", method, ErrNoAnswer, limit, ctx.Err())
		}
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	if a.err != nil {
		var werr *WireError
		if errors.As(a.err, &werr) {
			return &Error{Code: int(werr.Code), Message: werr.Message, Data: werr.Data}
		}
		return fmt.Errorf("%s: %w", method, a.err)
	}
	if err := unmarshalResult(a.result, result); err != nil {
		return fmt.Errorf("%s: jsonrpc: unmarshaling the result: %w", method, err)
	}
	return nil
}

// forget takes call n out of the waiting calls; false when its answer was delivered first.
func (c *Conn) forget(n int64) bool {
	c.mu.Lock()
	_, ok := c.pending[n]
	delete(c.pending, n)
	c.mu.Unlock()
	if ok {
		c.settle()
	}
	return ok
}

type cancelParams struct {
	ID ID `json:"id"`
}

// Notify queues a notification behind every frame handed over before it; it does not wait for
// the write. agent/session/update params take the append encoder; a stored update's
// (protocol.StoredSessionNotification) is written as it is, once checked (Stream.WriteStoredUpdate).
func (c *Conn) Notify(_ context.Context, method string, params any) error {
	if method == protocol.MethodSessionUpdate {
		switch n := params.(type) {
		case *protocol.SessionNotification:
			return c.stream.WriteSessionUpdate(n)
		case protocol.SessionNotification:
			return c.stream.WriteSessionUpdate(&n)
		case *protocol.StoredSessionNotification:
			return c.stream.WriteStoredUpdate(n)
		case protocol.StoredSessionNotification:
			return c.stream.WriteStoredUpdate(&n)
		}
	}
	return c.notify(method, params)
}

func (c *Conn) notify(method string, params any) error {
	raw, err := marshal(params)
	if err != nil {
		return fmt.Errorf("%s: jsonrpc: marshaling the params: %w", method, err)
	}
	c.mu.Lock()
	shut := c.closingLocked()
	c.mu.Unlock()
	if shut != nil {
		return shut
	}
	err = c.stream.writeNotification(method, raw)
	c.wrote(err)
	return err
}
