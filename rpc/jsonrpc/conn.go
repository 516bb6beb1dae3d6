package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/rpc/protocol"
)

// DefaultCallTimeout is the deadline of an outgoing request whose context has none, so a peer
// that never answers cannot hold the caller forever.
const DefaultCallTimeout = 30 * time.Second

// Options configure a Conn.
type Options struct {
	Logger *zap.Logger
	// Preempter answers requests on the read goroutine, ahead of everything queued behind them
	// ($/cancelRequest).
	Preempter jsonrpc2.Preempter
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

// Conn is one JSON-RPC connection: go.lsp.dev/jsonrpc2's connection over a Stream, with the
// house's rules for outgoing requests. It implements editorbridge.Conn.
type Conn struct {
	rpc     jsonrpc2.Conn
	stream  *Stream
	log     *zap.Logger
	timeout func(method string) time.Duration
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
	opts := []jsonrpc2.Option{jsonrpc2.WithCodec(Codec{})}
	if o.Preempter != nil {
		opts = append(opts, jsonrpc2.WithPreempter(o.Preempter))
	}
	return &Conn{rpc: jsonrpc2.NewConn(s, opts...), stream: s, log: o.Logger, timeout: o.Timeout}
}

// Go starts reading and dispatching incoming messages to handler (see jsonrpc2.Conn.Go).
func (c *Conn) Go(ctx context.Context, handler jsonrpc2.Handler) { c.rpc.Go(ctx, handler) }

// Close stops the connection and waits for it to end.
func (c *Conn) Close() error { return c.rpc.Close() }

// CloseStream closes the transport under the connection without waiting for its handlers, so a
// reader blocked mid-frame and a writer blocked on a peer that stopped reading both return.
func (c *Conn) CloseStream() error { return c.stream.Close() }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.rpc.Done() }

// Err is the error that ended the connection, nil for a clean end.
func (c *Conn) Err() error { return c.rpc.Err() }

// AfterAnswer runs fn once the answer to the peer's request id is queued; see
// Stream.AfterAnswer.
func (c *Conn) AfterAnswer(id jsonrpc2.ID, fn func()) { c.stream.AfterAnswer(id, fn) }

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
// with $/cancelRequest and ctx's error is returned. An error answer is returned as *Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	var limit time.Duration
	if _, ok := ctx.Deadline(); !ok {
		if limit = c.timeout(method); limit > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, limit, ErrNoAnswer)
			defer cancel()
		}
	}
	id, err := c.rpc.Call(ctx, method, params, result)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && id.IsValid() {
		// The answer no longer matters; tell the peer to stop working on it. Detached from ctx,
		// which has ended, but bounded.
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		if nerr := c.rpc.Notify(nctx, "$/cancelRequest", cancelParams{ID: id}); nerr != nil {
			c.log.Debug("$/cancelRequest not sent", zap.String("method", method), zap.Error(nerr))
		}
		cancel()
		if context.Cause(ctx) == ErrNoAnswer {
			return fmt.Errorf("%s: %w within %v (%w)", method, ErrNoAnswer, limit, ctx.Err())
		}
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	var werr *jsonrpc2.Error
	if errors.As(err, &werr) {
		return &Error{Code: int(werr.Code), Message: werr.Message, Data: json.RawMessage(werr.Data)}
	}
	return fmt.Errorf("%s: %w", method, err)
}

type cancelParams struct {
	ID jsonrpc2.ID `json:"id"`
}

// MarshalJSON writes the id as the peer sent it: a number or a string.
func (p cancelParams) MarshalJSON() ([]byte, error) {
	if n, ok := p.ID.Number(); ok {
		return fmt.Appendf(nil, `{"id":%d}`, n), nil
	}
	s, _ := p.ID.StringValue()
	b, _ := json.Marshal(s)
	return fmt.Appendf(nil, `{"id":%s}`, b), nil
}

// Notify queues a notification behind every frame handed over before it; it does not wait for
// the write. agent/session/update params take the append encoder.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if method == protocol.MethodSessionUpdate {
		switch n := params.(type) {
		case *protocol.SessionNotification:
			return c.stream.WriteSessionUpdate(n)
		case protocol.SessionNotification:
			return c.stream.WriteSessionUpdate(&n)
		}
	}
	return c.rpc.Notify(ctx, method, params)
}
