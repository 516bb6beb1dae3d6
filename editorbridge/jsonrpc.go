package editorbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// StdCodec is a jsonrpc2 payload codec over encoding/json (no HTML escaping, raw messages
// passed through), the semantics agentd's wire types are written for: jsonrpc2 v1's default
// json/v2 codec matches field names case-sensitively and ignores omitempty on numbers.
type StdCodec struct{}

func (StdCodec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case json.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func (StdCodec) Unmarshal(data []byte, v any) error {
	switch p := v.(type) {
	case *jsonrpc2.RawMessage:
		*p = bytes.Clone(data)
		return nil
	case *json.RawMessage:
		*p = bytes.Clone(data)
		return nil
	}
	return json.Unmarshal(data, v)
}

// NewJSONRPC2Conn adapts a go.lsp.dev/jsonrpc2 connection (made WithCodec(StdCodec{})) to Conn
// for tests and embedders; the daemon uses rpc's own wrapper. Calls without a deadline get
// timeout, a context that ends sends $/cancelRequest, and error answers become *RPCError.
func NewJSONRPC2Conn(c jsonrpc2.Conn, timeout time.Duration) Conn {
	return &rpc2Conn{c: c, timeout: timeout}
}

type rpc2Conn struct {
	c       jsonrpc2.Conn
	timeout time.Duration
}

func (r *rpc2Conn) Call(ctx context.Context, method string, params, result any) error {
	if _, ok := ctx.Deadline(); !ok && r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	id, err := r.c.Call(ctx, method, params, result)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		if n, ok := id.Number(); ok {
			nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			_ = r.c.Notify(nctx, "$/cancelRequest", json.RawMessage(fmt.Sprintf(`{"id":%d}`, n)))
			cancel()
		}
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	var we *jsonrpc2.Error
	if errors.As(err, &we) {
		return &RPCError{Code: int(we.Code), Message: we.Message}
	}
	return fmt.Errorf("%s: %w", method, err)
}

func (r *rpc2Conn) Notify(ctx context.Context, method string, params any) error {
	return r.c.Notify(ctx, method, params)
}
