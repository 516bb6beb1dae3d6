// Package editorbridge owns agentd's side of the editor: typed calls for every agentd → client
// request (reads through the editor's buffers, dirty buffers, diagnostics, workspace symbols,
// saving buffers, permission questions, secrets, and edits sent back as LSP workspace/applyEdit
// in the negotiated position encoding), session updates handed to the connection in order, and
// the fallbacks, each announced once with a notice, for a client that lacks a capability. It
// implements the session's Client and the tools' workspace port without importing either's
// package beyond workspace.
package editorbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

// Conn is the connection to the editor; jsonrpc's Conn implements it. Call applies a
// deadline and sends $/cancelRequest when ctx ends; a JSON-RPC error from the client comes back
// as *RPCError.
//
// Notify queues the notification and returns without waiting for the write; the connection
// writes every frame in the order it was handed over (calls, notifications and the answers to
// the client's requests alike). That order is the whole of the rule "a request's updates are on
// the wire before its answer, and a tool call's before the permission question about it": the
// bridge hands each update over before its caller can answer or ask.
type Conn interface {
	// Call and Notify keep nothing of params once they return.
	Call(ctx context.Context, method string, params, result any) error
	Notify(ctx context.Context, method string, params any) error
}

// RPCError is a JSON-RPC error the client answered with.
type RPCError = jsonrpc.Error

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
	// ACP is true on the ACP door (`agentd acp`), where edits are whole-file writes through
	// fs/write_text_file when WriteTextFile is offered, else disk writes, and programs may run in
	// the client's terminals when Terminal is offered.
	ACP           bool
	WriteTextFile bool
	Terminal      bool
	// ShowDocument is LSP's window.showDocument.support: the editor opens a URL agentd asks it
	// to (an MCP server's sign-in page).
	ShowDocument bool
}

func (c Capabilities) encoding() workspace.PositionEncoding {
	if c.PositionEncoding == "" {
		return workspace.UTF16
	}
	return workspace.PositionEncoding(c.PositionEncoding)
}

func (c Capabilities) resourceOp(op string) bool { return slices.Contains(c.ResourceOps, op) }

// Bridge is agentd's view of one connected editor.
type Bridge struct {
	conn Conn
	caps Capabilities
	log  *zap.Logger

	umu     sync.Mutex                   // guards note and content
	note    protocol.SessionNotification // the notification Update hands over, reused
	content protocol.ContentBlock        // the content UpdateChunk hands over, reused

	mu      sync.Mutex
	noticed map[string]bool
	// methodMissing records capabilities the client advertised but answered -32601 for.
	methodMissing map[string]bool
}

// New makes the bridge of one connection.
func New(conn Conn, caps Capabilities, log *zap.Logger) *Bridge {
	if log == nil {
		log = zap.NewNop()
	}
	return &Bridge{
		conn: conn, caps: caps, log: log,
		noticed: map[string]bool{}, methodMissing: map[string]bool{},
	}
}

// Capabilities returns what the bridge was told the client can do.
func (b *Bridge) Capabilities() Capabilities { return b.caps }

// Client returns the engine's view of the editor (session.Client).
func (b *Bridge) Client() *Client { return &Client{b: b} }

// Update hands one session update to the connection, which writes updates in the order they
// were handed over, ahead of anything handed over later (see Conn). It does not wait for the
// write: a slow client never holds the engine.
func (b *Bridge) Update(sessionID string, u protocol.SessionUpdate) {
	// One reused notification instead of one on the heap per streamed delta (Notify keeps
	// nothing of its params); updates are serialized by the connection's queue anyway.
	b.umu.Lock()
	b.note = protocol.SessionNotification{SessionID: sessionID, Update: u}
	err := b.conn.Notify(context.Background(), protocol.MethodSessionUpdate, &b.note)
	b.note = protocol.SessionNotification{}
	b.umu.Unlock()
	if err != nil {
		b.log.Warn("session update not delivered", zap.String("session", sessionID),
			zap.String("kind", u.SessionUpdate), zap.Error(err))
	}
	if u.SessionUpdate == protocol.UpdateNotice && !b.caps.Agent.Notices && !b.caps.ACP {
		b.showNotice(u)
	}
}

// UpdateStored hands over one update a transcript stored, as the JSON it was stored as
// (session/load's replay): the connection checks that it is one valid JSON object and writes it
// without decoding and encoding it again. One the connection refuses is decoded and sent as
// Update sends it, when it decodes at all; a notice to a client that does not show notices
// takes Update's path, which also shows it as window/showMessage.
func (b *Bridge) UpdateStored(sessionID, kind string, update []byte) {
	if kind == protocol.UpdateNotice && !b.caps.Agent.Notices && !b.caps.ACP {
		b.updateDecoded(sessionID, update)
		return
	}
	n := protocol.StoredSessionNotification{SessionID: sessionID, Update: update}
	err := b.conn.Notify(context.Background(), protocol.MethodSessionUpdate, &n)
	if errors.Is(err, jsonrpc.ErrStoredUpdate) {
		b.updateDecoded(sessionID, update)
		return
	}
	if err != nil {
		b.log.Warn("session update not delivered", zap.String("session", sessionID),
			zap.String("kind", kind), zap.Error(err))
	}
}

// updateDecoded decodes a stored update and sends it as Update does.
func (b *Bridge) updateDecoded(sessionID string, update []byte) {
	var u protocol.SessionUpdate
	if err := json.Unmarshal(update, &u); err != nil {
		b.log.Warn("stored session update not replayed: it is not JSON", zap.String("session", sessionID), zap.Error(err))
		return
	}
	b.Update(sessionID, u)
}

// showNotice tells an LSP client that did not say it shows notice updates
// (clientCapabilities.notices) what the notice says, as window/showMessage: a fallback, a retry,
// project settings left out or a missing sandbox must reach the user in any editor. (The ACP
// door says it in ACP's terms: rpc/acp.go.)
func (b *Bridge) showNotice(u protocol.SessionUpdate) {
	typ := 3 // LSP MessageType Info
	switch u.Severity {
	case protocol.SeverityError:
		typ = 1
	case protocol.SeverityWarning:
		typ = 2
	}
	msg := "agentd: " + u.NoticeTitle
	if u.Description != "" {
		msg += ": " + u.Description
	}
	if err := b.conn.Notify(context.Background(), "window/showMessage", map[string]any{"type": typ, "message": msg}); err != nil {
		b.log.Debug("window/showMessage not sent", zap.Error(err))
	}
}

// UpdateChunk is Update for a streamed text or thought chunk (kind agent_message_chunk or
// agent_thought_chunk) with a text content block: the block is the bridge's own, reused, so the
// engine does not put one on the heap per streamed token.
func (b *Bridge) UpdateChunk(sessionID, kind, messageID, text string) {
	b.umu.Lock()
	b.content = protocol.ContentBlock{Type: "text", Text: text}
	b.note = protocol.SessionNotification{SessionID: sessionID,
		Update: protocol.SessionUpdate{SessionUpdate: kind, MessageID: messageID, Content: &b.content}}
	err := b.conn.Notify(context.Background(), protocol.MethodSessionUpdate, &b.note)
	b.note = protocol.SessionNotification{}
	b.content = protocol.ContentBlock{}
	b.umu.Unlock()
	if err != nil {
		b.log.Warn("session update not delivered", zap.String("session", sessionID),
			zap.String("kind", kind), zap.Error(err))
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
	var dirs []string
	if roots != nil {
		dirs = roots.Dirs()
	}
	return &editorWorkspace{b: b, sessionID: sessionID, roots: roots, disk: workspace.NewDisk(dirs...)}
}

// Client is the engine's view of the editor: it satisfies session.Client.
type Client struct{ b *Bridge }

// Update queues one agent/session/update; see Bridge.Update.
func (c *Client) Update(sessionID string, u protocol.SessionUpdate) { c.b.Update(sessionID, u) }

// UpdateStored queues one update as a transcript stored it; see Bridge.UpdateStored.
func (c *Client) UpdateStored(sessionID, kind string, update []byte) {
	c.b.UpdateStored(sessionID, kind, update)
}

// UpdateChunk queues one streamed text or thought chunk; see Bridge.UpdateChunk.
func (c *Client) UpdateChunk(sessionID, kind, messageID, text string) {
	c.b.UpdateChunk(sessionID, kind, messageID, text)
}

// RequestPermission asks the user. The question goes out behind the updates handed over before
// it (see Conn), so the client has seen the tool call it is about. A context that ends sends
// $/cancelRequest (the connection does) and returns the cancelled outcome with the context's
// error.
func (c *Client) RequestPermission(ctx context.Context, p protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
	cancelled := protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "cancelled"}}
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

// ShowDocument asks the editor to open uri in the user's browser (window/showDocument with
// external: true). served is false when the editor does not offer it (or is the ACP door).
func (c *Client) ShowDocument(ctx context.Context, uri string) (bool, error) {
	if c.b.caps.ACP || !c.b.caps.ShowDocument {
		return false, nil
	}
	var res protocol.ShowDocumentResult
	if err := c.b.conn.Call(ctx, protocol.MethodShowDocument, protocol.ShowDocumentParams{URI: uri, External: true}, &res); err != nil {
		return true, fmt.Errorf("asking the editor to open %s: %w", uri, err)
	}
	if !res.Success {
		return true, fmt.Errorf("the editor could not open %s", uri)
	}
	return true, nil
}

// SignInByLink is true on the ACP door: an MCP server's sign-in starts at once, its link posted
// in the session (ACP has no action to start it).
func (c *Client) SignInByLink() bool { return c.b.caps.ACP }

// CanAskPermission reports whether the client answers permission requests.
func (c *Client) CanAskPermission() bool { return c.b.caps.Agent.Permissions.UI }
