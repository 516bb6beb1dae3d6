// Package jsonrpc is agentd's one JSON-RPC transport, used alike by the daemon (rpc) and by every
// peer in the tests (editorbridge/fakeeditor, the bridge's and the tools' tests): go.lsp.dev/
// jsonrpc2's connection over LSP framing with a bounded reader, one payload codec, calls with a
// deadline that send $/cancelRequest when abandoned, and the ordered writer.
//
// The ordered writer is the one place that keeps a request's updates ahead of its answer: every
// outgoing frame (a notification, a request, an answer) is queued in the order it is handed over
// and written in that order by one goroutine, so a notification queued before a handler returns
// is on the wire before the answer, with no waiting and no flushing by the sender. While a write
// is in progress the frames queued behind it leave together in one write system call.
package jsonrpc

import (
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
)

// Codec is encoding/json for params and results: the wire types are tagged for it (omitempty,
// case-insensitive matching), which jsonrpc2 v1's default json/v2 codec does not honour. Its
// output escapes HTML characters exactly as protocol.AppendSessionUpdate does, so every frame
// agentd writes follows one set of escaping rules. Raw messages pass through untouched.
type Codec struct{}

func (Codec) Marshal(v any) ([]byte, error) {
	switch r := v.(type) {
	case jsonrpc2.RawMessage:
		if r == nil {
			return []byte("null"), nil
		}
		return r, nil
	case json.RawMessage:
		if r == nil {
			return []byte("null"), nil
		}
		return r, nil
	}
	return json.Marshal(v)
}

func (Codec) Unmarshal(data []byte, v any) error {
	switch r := v.(type) {
	case *jsonrpc2.RawMessage:
		*r = append((*r)[:0], data...)
		return nil
	case *json.RawMessage:
		*r = append((*r)[:0], data...)
		return nil
	}
	return json.Unmarshal(data, v)
}
