// Package jsonrpc is agentd's one JSON-RPC 2.0 transport, used alike by the daemon (rpc, both
// doors: LSP framing and ACP's newline-delimited JSON) and by every peer in the tests
// (editorbridge/fakeeditor, the bridge's and the tools' tests): a symmetric connection (Conn)
// over a bounded frame reader, encoding/json for payloads, calls with a deadline that send
// $/cancelRequest when abandoned, and the ordered writer.
//
// It replaces go.lsp.dev/jsonrpc2, whose behaviour it keeps (see Conn): that library's default
// codec linked a second JSON implementation into the daemon although agentd never used it, and
// its connection handed the reading role to a new goroutine for every request that went
// concurrent, each growing its stack deep in the decoder (docs/benchmarks.md).
//
// The ordered writer is the one place that keeps a request's updates ahead of its answer: every
// outgoing frame (a notification, a request, an answer) is queued in the order it is handed over
// and written in that order by one goroutine, so a notification queued before a handler returns
// is on the wire before the answer, with no waiting and no flushing by the sender. While a write
// is in progress the frames queued behind it leave together in one write system call.
package jsonrpc
