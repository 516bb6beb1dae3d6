package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/rpc/protocol"
)

// Default deadlines of agentd → client requests. Every outgoing request gets one, so a client
// that never answers cannot hold a turn forever; a permission request waits for a human and gets
// a long one.
const (
	DefaultCallTimeout    = 30 * time.Second
	PermissionCallTimeout = 30 * time.Minute
)

// Conn is the connection as the editor bridge sees it (it implements editorbridge.Conn): calls
// carry a deadline and send $/cancelRequest when their context ends before the answer, a
// client's error answer comes back as *editorbridge.RPCError (the bridge's fallbacks read its
// code), and session updates take a fast path that skips reflection.
type Conn struct {
	rpc    jsonrpc2.Conn
	stream *Stream
	log    *zap.Logger
	// Timeouts overrides DefaultCallTimeout per method.
	timeouts map[string]time.Duration
}

func newConn(c jsonrpc2.Conn, s *Stream, log *zap.Logger) *Conn {
	return &Conn{
		rpc: c, stream: s, log: log,
		timeouts: map[string]time.Duration{protocol.MethodRequestPermission: PermissionCallTimeout},
	}
}

// Call sends a request and waits for the answer. Without a deadline on ctx it gets the method's
// default. When ctx ends first, the client is told with $/cancelRequest and ctx's error is
// returned. A JSON-RPC error answer is returned as *editorbridge.RPCError.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if _, ok := ctx.Deadline(); !ok {
		d, ok := c.timeouts[method]
		if !ok {
			d = DefaultCallTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	id, err := c.rpc.Call(ctx, method, params, result)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && id.IsValid() {
		// The answer no longer matters; tell the client to stop working on it. Detached from
		// ctx, which has ended, but bounded.
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		if nerr := c.rpc.Notify(nctx, "$/cancelRequest", cancelParams{ID: id}); nerr != nil {
			c.log.Debug("$/cancelRequest not sent", zap.String("method", method), zap.Error(nerr))
		}
		cancel()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	var werr *jsonrpc2.Error
	if errors.As(err, &werr) {
		return &editorbridge.RPCError{Code: int(werr.Code), Message: werr.Message}
	}
	return fmt.Errorf("%s: %w", method, err)
}

type cancelParams struct {
	ID jsonrpc2.ID `json:"id"`
}

func (p cancelParams) MarshalJSON() ([]byte, error) {
	if n, ok := p.ID.Number(); ok {
		return fmt.Appendf(nil, `{"id":%d}`, n), nil
	}
	s, _ := p.ID.StringValue()
	b, _ := json.Marshal(s)
	return fmt.Appendf(nil, `{"id":%s}`, b), nil
}

// Notify sends a notification. agent/session/update params go through the append encoder.
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
