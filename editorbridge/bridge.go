// Package editorbridge owns agentd's side of the editor: typed calls for every agentd → client
// request (reads through the editor's buffers, dirty buffers, diagnostics, workspace symbols,
// saving buffers, permission questions, secrets, and edits sent back as LSP workspace/applyEdit
// in the negotiated position encoding), the ordered delivery of session updates, and the
// fallbacks, each announced once with a notice, for a client that lacks a capability. It
// implements the session's Client and the tools' workspace port without importing either's
// package beyond workspace.
package editorbridge

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/rpc/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

// Conn is the connection to the editor: rpc's connection wrapper implements it. Call applies a
// deadline and sends $/cancelRequest when ctx ends; a JSON-RPC error from the client comes back
// as *RPCError.
type Conn interface {
	Call(ctx context.Context, method string, params, result any) error
	Notify(ctx context.Context, method string, params any) error
}

// RPCError is a JSON-RPC error the client answered with.
type RPCError struct {
	Code    int
	Message string
}

func (e *RPCError) Error() string { return fmt.Sprintf("editor error %d: %s", e.Code, e.Message) }

// Capabilities are what the client said it can do: the agent capabilities of
// initializationOptions.agent, and from the standard LSP capabilities workspace.applyEdit,
// workspace.workspaceEdit.documentChanges and resourceOperations, and the negotiated position
// encoding ("" means utf-16).
type Capabilities struct {
	Agent            protocol.ClientCapabilities
	ApplyEdit        bool
	DocumentChanges  bool
	ResourceOps      []string // "create", "rename", "delete"
	PositionEncoding string
}

func (c Capabilities) encoding() workspace.PositionEncoding {
	if c.PositionEncoding == "" {
		return workspace.UTF16
	}
	return workspace.PositionEncoding(c.PositionEncoding)
}

func (c Capabilities) resourceOp(op string) bool { return slices.Contains(c.ResourceOps, op) }

// notifyTimeout bounds one session update write: a client that stops reading must not wedge the
// queue forever.
const notifyTimeout = 30 * time.Second

// updateGrace is how long Update waits for its notification to be written. Writes take
// microseconds while the client reads, so Update normally returns with the update on the wire,
// which keeps every update ahead of whatever the caller sends next (a prompt's answer, which
// rpc writes on its own path). A client that stops reading costs the engine at most this per
// update, never a wedged turn.
const updateGrace = 250 * time.Millisecond

// Bridge is agentd's view of one connected editor.
type Bridge struct {
	conn Conn
	caps Capabilities
	log  *zap.Logger
	disk *workspace.Disk

	mu        sync.Mutex
	queue     []protocol.SessionNotification
	drained   chan struct{} // non-nil while a drainer runs; closed when the queue is empty
	queued    uint64        // updates queued so far
	written   uint64        // updates written (or given up on) so far
	writtenCh chan struct{} // closed and replaced whenever written grows
	noticed   map[string]bool
	// methodMissing records capabilities the client advertised but answered -32601 for.
	methodMissing map[string]bool
}

// New makes the bridge of one connection.
func New(conn Conn, caps Capabilities, log *zap.Logger) *Bridge {
	if log == nil {
		log = zap.NewNop()
	}
	return &Bridge{
		conn: conn, caps: caps, log: log, disk: workspace.NewDisk(),
		noticed: map[string]bool{}, methodMissing: map[string]bool{}, writtenCh: make(chan struct{}),
	}
}

// Capabilities returns what the bridge was told the client can do.
func (b *Bridge) Capabilities() Capabilities { return b.caps }

// Client returns the engine's view of the editor (session.Client).
func (b *Bridge) Client() *Client { return &Client{b: b} }

// Update queues one session update and waits (briefly: updateGrace) until it is written.
// Updates go out in the order they were queued, from one goroutine that runs only while the
// queue is not empty, so a slow client never blocks the caller for long.
func (b *Bridge) Update(sessionID string, u protocol.SessionUpdate) {
	b.mu.Lock()
	b.queue = append(b.queue, protocol.SessionNotification{SessionID: sessionID, Update: u})
	b.queued++
	mine := b.queued
	if b.drained == nil {
		b.drained = make(chan struct{})
		go b.drain()
	}
	b.mu.Unlock()
	b.waitWritten(mine)
}

func (b *Bridge) waitWritten(n uint64) {
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		done, ch := b.written >= n, b.writtenCh
		b.mu.Unlock()
		if done {
			return
		}
		if timeout == nil {
			t := time.NewTimer(updateGrace)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-ch:
		case <-timeout:
			return
		}
	}
}

func (b *Bridge) drain() {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			close(b.drained)
			b.drained = nil
			b.mu.Unlock()
			return
		}
		batch := b.queue
		b.queue = nil
		b.mu.Unlock()
		for i := range batch {
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			err := b.conn.Notify(ctx, protocol.MethodSessionUpdate, &batch[i])
			cancel()
			if err != nil {
				b.log.Warn("session update not delivered", zap.String("session", batch[i].SessionID),
					zap.String("kind", batch[i].Update.SessionUpdate), zap.Error(err))
			}
			b.mu.Lock()
			b.written++
			close(b.writtenCh)
			b.writtenCh = make(chan struct{})
			b.mu.Unlock()
		}
	}
}

// Flush waits until every update queued so far has been written, so a prompt's answer (or a
// permission request) never overtakes the updates before it.
func (b *Bridge) Flush(ctx context.Context) error {
	for {
		b.mu.Lock()
		ch := b.drained
		b.mu.Unlock()
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Notice sends a notice update to the session.
func (b *Bridge) Notice(sessionID, severity, title, description string) {
	b.Update(sessionID, protocol.SessionUpdate{
		SessionUpdate: protocol.UpdateNotice, Severity: severity, NoticeTitle: title, Description: description,
	})
}

// noticeOnce sends a warning the first time key comes up for the session.
func (b *Bridge) noticeOnce(sessionID, key, title, description string) {
	b.noticeOnceSeverity(sessionID, key, protocol.SeverityWarning, title, description)
}

// noticeOnceSeverity sends a notice the first time key comes up for the session.
func (b *Bridge) noticeOnceSeverity(sessionID, key, severity, title, description string) {
	b.mu.Lock()
	k := sessionID + "\x00" + key
	seen := b.noticed[k]
	b.noticed[k] = true
	b.mu.Unlock()
	if !seen {
		b.Notice(sessionID, severity, title, description)
	}
}

// callOptional makes a request the client may not serve. served is false, with no error, when the
// client did not advertise it or has answered -32601 for it before; a -32601 is remembered, so
// such a client is asked once.
func (b *Bridge) callOptional(ctx context.Context, advertised bool, method string, params, result any) (served bool, err error) {
	b.mu.Lock()
	missing := b.methodMissing[method]
	b.mu.Unlock()
	if !advertised || missing {
		return false, nil
	}
	if err := b.conn.Call(ctx, method, params, result); err != nil {
		if !isCode(err, protocol.CodeMethodNotFound) {
			return true, err
		}
		b.mu.Lock()
		b.methodMissing[method] = true
		b.mu.Unlock()
		return false, nil
	}
	return true, nil
}

// Secret asks the client's secret store (agent/x/secrets/get). ok is false when the client has
// no secret store or no value for key.
func (b *Bridge) Secret(ctx context.Context, key string) (value string, ok bool, err error) {
	var res protocol.SecretsGetResult
	served, err := b.callOptional(ctx, b.caps.Agent.Secrets, protocol.MethodSecretsGet, protocol.SecretsGetParams{Key: key}, &res)
	if err != nil {
		return "", false, fmt.Errorf("asking the editor for secret %q: %w", key, err)
	}
	if !served || res.Value == nil {
		return "", false, nil
	}
	return *res.Value, true, nil
}

// Workspace returns the port of one session over this editor.
func (b *Bridge) Workspace(sessionID string, roots *workspace.Roots) workspace.Workspace {
	return &editorWorkspace{b: b, sessionID: sessionID, roots: roots}
}

// Client is the engine's view of the editor: it satisfies session.Client.
type Client struct{ b *Bridge }

// Update queues one agent/session/update; see Bridge.Update.
func (c *Client) Update(sessionID string, u protocol.SessionUpdate) { c.b.Update(sessionID, u) }

// RequestPermission asks the user. Updates queued before it are flushed first, so the client
// has seen the tool call the question is about. A context that ends sends $/cancelRequest (the
// connection does) and returns the cancelled outcome with the context's error.
func (c *Client) RequestPermission(ctx context.Context, p protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
	cancelled := protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "cancelled"}}
	if err := c.b.Flush(ctx); err != nil {
		return cancelled, err
	}
	var res protocol.RequestPermissionResult
	if err := c.b.conn.Call(ctx, protocol.MethodRequestPermission, p, &res); err != nil {
		if ctx.Err() != nil {
			return cancelled, ctx.Err()
		}
		return cancelled, fmt.Errorf("asking the editor for permission: %w", err)
	}
	switch res.Outcome.Outcome {
	case "selected":
		if res.Outcome.OptionID == "" {
			return cancelled, fmt.Errorf("the editor selected no option")
		}
	case "cancelled":
	default:
		return cancelled, fmt.Errorf("the editor answered an unknown outcome %q", res.Outcome.Outcome)
	}
	return res, nil
}

// CanAskPermission reports whether the client answers permission requests.
func (c *Client) CanAskPermission() bool { return c.b.caps.Agent.Permissions.UI }

// Flush waits until queued updates are written; see Bridge.Flush.
func (c *Client) Flush(ctx context.Context) error { return c.b.Flush(ctx) }
