// Package fakeeditor owns the main integration harness: a fake editor that is a real JSON-RPC
// peer of agentd over a pipe (or the built binary's stdio), with buffers and versions, scripted
// permission answers, workspace/applyEdit applied to its buffers with a version check, every
// reverse request of the contract served from its buffers or the disk, and a record of every
// message both ways that is printed when the test fails. Tests wait on expectations with a
// deadline, never on sleeps.
package fakeeditor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

// Options describe the editor: what it advertises and how it answers.
type Options struct {
	// Agent are the capabilities of initializationOptions.agent. A reverse request the editor
	// did not advertise fails the test and is answered -32601, as a real client would.
	Agent protocol.ClientCapabilities
	// ApplyEdit, DocumentChanges and ResourceOps are the LSP workspace edit capabilities.
	ApplyEdit       bool
	DocumentChanges bool
	ResourceOps     []string
	// PositionEncodings offered in general.positionEncodings; nil means utf-16 only.
	PositionEncodings []string
	// Permission answers a permission request when the scripted queue is empty. Nil fails the
	// test on an unexpected request (and answers cancelled).
	Permission func(protocol.RequestPermissionParams) protocol.PermissionOutcome
	// Secrets served by agent/x/secrets/get.
	Secrets map[string]string
	// Settings sent as initializationOptions.agent.settings.
	Settings json.RawMessage
	// WorkspaceFolders, when set, are sent as initialize's workspaceFolders (a multi-root
	// workspace); rootUri stays Initialize's rootDir.
	WorkspaceFolders []string
	// Timeout bounds every wait and call; 10 s when zero.
	Timeout time.Duration
	// Unimplemented lists methods the editor advertises yet answers -32601 for, like a client
	// whose capability flags run ahead of its handlers.
	Unimplemented []string
	// ShowDocument, when set, is advertised (window.showDocument.support) and answers
	// window/showDocument: the user's browser opening uri (external) or the editor showing it.
	ShowDocument func(uri string, external bool) bool
	// Unanswered lists methods the editor receives and never answers, like a client whose
	// handler hangs: the request is recorded, then held until the test ends.
	Unanswered []string
	// Elicit answers agent/elicitation/create (advertise Agent.Elicitation too).
	Elicit func(protocol.ElicitationParams) protocol.ElicitationResult
}

// Full returns options for an editor that serves everything in utf-16, like VS Code.
func Full() Options {
	return Options{
		Agent: protocol.ClientCapabilities{
			FS:               protocol.FSCapabilities{ReadTextFile: true},
			DirtyBuffers:     true,
			Diagnostics:      true,
			Permissions:      protocol.PermissionCapabilities{UI: true},
			Secrets:          true,
			SaveBuffers:      true,
			WorkspaceSymbols: true,
			EditorState:      true,
			Notices:          true,
		},
		ApplyEdit:       true,
		DocumentChanges: true,
		ResourceOps:     []string{"create", "rename", "delete"},
	}
}

// Minimal returns options for a bare LSP client: no agent extensions, no applyEdit.
func Minimal() Options { return Options{} }

type buffer struct {
	text    string
	version int32
	dirty   bool
}

// Editor is the fake editor.
type Editor struct {
	t    testing.TB
	opts Options
	conn *jsonrpc.Conn
	enc  workspace.PositionEncoding

	stop        chan struct{} // closed when the test ends, releasing unanswered requests
	mu          sync.Mutex
	changed     chan struct{}
	done        bool
	bufs        map[string]*buffer
	updates     []protocol.SessionNotification
	shown       []ShownMessage
	requests    []Request
	log         []string
	permQueue   []string
	diags       map[string][]editorbridge.Diagnostic
	symbols     []editorbridge.WorkspaceSymbol
	refuse      string
	saveFail    map[string]string
	permissions []protocol.RequestPermissionParams
	edits       []editorbridge.ApplyWorkspaceEditParams
	opened      []string         // open buffers' paths, the most recently opened last
	state       *json.RawMessage // the scripted agent/x/editor_state answer; nil: from the buffers
}

// Request is a reverse request the editor received.
type Request struct {
	Method string
	Params json.RawMessage
}

// Pipe returns two connected ends of an in-memory duplex pipe: one for the editor, one for
// agentd.
func Pipe() (editorEnd, agentEnd io.ReadWriteCloser) {
	a, b := net.Pipe()
	return a, b
}

// New starts a fake editor on rw. It stops when the test ends and prints its message log if the
// test failed.
func New(t testing.TB, rw io.ReadWriteCloser, opts Options) *Editor {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	e := &Editor{
		t: t, opts: opts, enc: workspace.NegotiateEncoding(opts.PositionEncodings),
		changed: make(chan struct{}), bufs: map[string]*buffer{}, stop: make(chan struct{}),
		diags: map[string][]editorbridge.Diagnostic{}, saveFail: map[string]string{},
	}
	// The editor speaks through the same transport as agentd, so both ends frame, encode and
	// order messages by one set of rules.
	e.conn = jsonrpc.NewConn(rw, rw, jsonrpc.Options{CallTimeout: opts.Timeout, Trace: e.record})
	e.conn.Go(context.Background(), e.handle)
	t.Cleanup(func() {
		e.mu.Lock()
		e.done = true
		e.mu.Unlock()
		close(e.stop)
		closed := make(chan struct{})
		go func() { e.conn.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(opts.Timeout):
			t.Errorf("fakeeditor: the connection did not close within %v", opts.Timeout)
		}
		if t.Failed() {
			t.Logf("fakeeditor message log:\n%s", e.Log())
		}
	})
	return e
}

// record logs one frame body, as read (agentd → editor) or queued (editor → agentd).
func (e *Editor) record(incoming bool, body []byte) {
	dir := "editor → agentd"
	if incoming {
		dir = "agentd → editor"
	}
	line := dir + " " + string(body)
	e.mu.Lock()
	e.log = append(e.log, line)
	e.changedLocked()
	e.mu.Unlock()
}

// Log returns every message so far, one a line.
func (e *Editor) Log() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.log, "\n")
}

// ShownMessage is a window/showMessage the editor received.
type ShownMessage struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

// Shown returns the window/showMessage notifications so far.
func (e *Editor) Shown() []ShownMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.shown)
}

// Messages returns the recorded log lines.
func (e *Editor) Messages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// Encoding is the position encoding the editor uses.
func (e *Editor) Encoding() workspace.PositionEncoding {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.enc
}

// BridgeCapabilities is what agentd would negotiate with this editor, for tests that build an
// editorbridge.Bridge directly.
func (e *Editor) BridgeCapabilities() editorbridge.Capabilities {
	c := e.opts.BridgeCaps()
	c.PositionEncoding = string(e.Encoding())
	return c
}

// BridgeCaps is the capabilities these options amount to, with the encoding agentd would pick.
func (o Options) BridgeCaps() editorbridge.Capabilities {
	return editorbridge.Capabilities{
		Agent: o.Agent, ApplyEdit: o.ApplyEdit, DocumentChanges: o.DocumentChanges,
		ResourceOps: o.ResourceOps, PositionEncoding: string(workspace.NegotiateEncoding(o.PositionEncodings)),
		ShowDocument: o.ShowDocument != nil,
	}
}

// changedLocked wakes every waiter. Call with mu held.
func (e *Editor) changedLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// errorf fails the test from a handler goroutine, unless the test is over.
func (e *Editor) errorf(format string, args ...any) {
	e.mu.Lock()
	done := e.done
	e.mu.Unlock()
	if !done {
		e.t.Errorf("fakeeditor: "+format, args...)
	}
}

// ---- waiting ----

// Wait blocks until cond holds, re-checking whenever the editor's state changes, and fails the
// test when the deadline passes first.
func (e *Editor) Wait(what string, cond func() bool) {
	e.t.Helper()
	if err := e.WaitErr(cond); err != nil {
		e.t.Fatalf("fakeeditor: waiting for %s: %v", what, err)
	}
}

// WaitErr is Wait returning an error instead of failing the test (for use off the test
// goroutine).
func (e *Editor) WaitErr(cond func() bool) error {
	deadline := time.NewTimer(e.opts.Timeout)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		ch := e.changed
		e.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-e.conn.Done():
			if cond() {
				return nil
			}
			return fmt.Errorf("the connection ended (%v)", e.conn.Err())
		case <-deadline.C:
			return fmt.Errorf("not done after %v", e.opts.Timeout)
		}
	}
}

// Updates returns every agent/session/update received so far.
func (e *Editor) Updates() []protocol.SessionNotification {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.updates)
}

// WaitUpdate waits until an update matching pred has arrived (earlier ones count) and returns
// the first such.
func (e *Editor) WaitUpdate(what string, pred func(protocol.SessionNotification) bool) protocol.SessionNotification {
	e.t.Helper()
	var found protocol.SessionNotification
	e.Wait(what, func() bool {
		for _, u := range e.Updates() {
			if pred(u) {
				found = u
				return true
			}
		}
		return false
	})
	return found
}

// WaitUpdateKind waits for an update of the given kind in the session.
func (e *Editor) WaitUpdateKind(sessionID, kind string) protocol.SessionNotification {
	e.t.Helper()
	return e.WaitUpdate("a "+kind+" update", func(n protocol.SessionNotification) bool {
		return n.SessionID == sessionID && n.Update.SessionUpdate == kind
	})
}

// Requests returns the reverse requests received so far.
func (e *Editor) Requests() []Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.requests)
}

// WaitRequest waits until n reverse requests of method have arrived and returns them.
func (e *Editor) WaitRequest(method string, n int) []Request {
	e.t.Helper()
	var got []Request
	e.Wait(fmt.Sprintf("%d %s request(s)", n, method), func() bool {
		got = got[:0]
		for _, r := range e.Requests() {
			if r.Method == method {
				got = append(got, r)
			}
		}
		return len(got) >= n
	})
	return got
}

// PermissionRequests returns the permission requests received so far.
func (e *Editor) PermissionRequests() []protocol.RequestPermissionParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.permissions)
}

// AppliedEdits returns the workspace/applyEdit params the editor applied.
func (e *Editor) AppliedEdits() []editorbridge.ApplyWorkspaceEditParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.edits)
}

// ---- scripting ----

// AnswerPermissions queues the option ids the next permission requests are answered with
// ("cancelled" answers the cancelled outcome).
func (e *Editor) AnswerPermissions(optionIDs ...string) {
	e.mu.Lock()
	e.permQueue = append(e.permQueue, optionIDs...)
	e.mu.Unlock()
}

// RefuseEdits makes every following workspace/applyEdit answer applied:false with reason; ""
// accepts edits again.
func (e *Editor) RefuseEdits(reason string) {
	e.mu.Lock()
	e.refuse = reason
	e.mu.Unlock()
}

// SetDiagnostics sets the diagnostics the editor reports for path.
func (e *Editor) SetDiagnostics(path string, ds []editorbridge.Diagnostic) {
	e.mu.Lock()
	e.diags[path] = ds
	e.mu.Unlock()
}

// SetSymbols sets the workspace symbols the editor's "language servers" know.
func (e *Editor) SetSymbols(syms []editorbridge.WorkspaceSymbol) {
	e.mu.Lock()
	e.symbols = syms
	e.mu.Unlock()
}

// SetEditorState scripts the answer to agent/x/editor_state. Until it is called the editor
// answers from its buffers: every open file, the most recently opened one active, no selection.
func (e *Editor) SetEditorState(st protocol.EditorStateResult) {
	b, err := json.Marshal(st)
	if err != nil {
		e.t.Fatalf("fakeeditor: SetEditorState: %v", err)
	}
	e.SetEditorStateRaw(b)
}

// SetEditorStateRaw scripts the answer to agent/x/editor_state as raw JSON, malformed or huge
// ones included, as a broken client would send them.
func (e *Editor) SetEditorStateRaw(raw json.RawMessage) {
	e.mu.Lock()
	r := json.RawMessage(slices.Clone(raw))
	e.state = &r
	e.mu.Unlock()
}

// editorState is the answer to agent/x/editor_state.
func (e *Editor) editorState() any {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state != nil {
		return *e.state
	}
	res := protocol.EditorStateResult{OpenFiles: append([]string{}, e.opened...)}
	if n := len(e.opened); n > 0 {
		res.ActiveFile = e.opened[n-1]
	}
	return res
}

// FailSave makes agent/x/save_buffers report path as failed with reason.
func (e *Editor) FailSave(path, reason string) {
	e.mu.Lock()
	e.saveFail[path] = reason
	e.mu.Unlock()
}

// ---- buffers ----

func diskText(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// Open opens path in a buffer with text (version 1); it is dirty when text differs from the disk.
func (e *Editor) Open(path, text string) {
	d, ok := diskText(path)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bufs[path] = &buffer{text: text, version: 1, dirty: !ok || d != text}
	e.opened = append(slices.DeleteFunc(e.opened, func(p string) bool { return p == path }), path)
	e.changedLocked()
}

// OpenFile opens path with its text on disk.
func (e *Editor) OpenFile(path string) {
	e.t.Helper()
	d, ok := diskText(path)
	if !ok {
		e.t.Fatalf("fakeeditor: OpenFile(%s): no such file", path)
	}
	e.Open(path, d)
}

// Edit replaces an open buffer's text, as the user typing: the version goes up and the buffer
// is dirty.
func (e *Editor) Edit(path, text string) {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.bufs[path]
	if b == nil {
		e.t.Fatalf("fakeeditor: Edit(%s): not open", path)
	}
	b.text, b.version, b.dirty = text, b.version+1, true
	e.changedLocked()
}

// Save writes an open buffer to disk.
func (e *Editor) Save(path string) {
	e.t.Helper()
	if err := e.save(path); err != nil {
		e.t.Fatalf("fakeeditor: %v", err)
	}
}

func (e *Editor) save(path string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.bufs[path]
	if b == nil {
		return fmt.Errorf("save %s: not open", path)
	}
	if err := os.WriteFile(path, []byte(b.text), 0o644); err != nil {
		return err
	}
	b.dirty = false
	e.changedLocked()
	return nil
}

// CloseBuffer closes a buffer, dropping unsaved changes.
func (e *Editor) CloseBuffer(path string) {
	e.mu.Lock()
	delete(e.bufs, path)
	e.opened = slices.DeleteFunc(e.opened, func(p string) bool { return p == path })
	e.changedLocked()
	e.mu.Unlock()
}

// Text is what the user sees for path: the open buffer, else the disk. It fails the test when
// neither exists.
func (e *Editor) Text(path string) string {
	e.t.Helper()
	s, ok := e.Lookup(path)
	if !ok {
		e.t.Fatalf("fakeeditor: %s is neither open nor on disk", path)
	}
	return s
}

// Lookup is Text reporting absence instead of failing.
func (e *Editor) Lookup(path string) (string, bool) {
	e.mu.Lock()
	b := e.bufs[path]
	e.mu.Unlock()
	if b != nil {
		return b.text, true
	}
	return diskText(path)
}

// Version of an open buffer.
func (e *Editor) Version(path string) (int32, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b := e.bufs[path]; b != nil {
		return b.version, true
	}
	return 0, false
}

// Dirty reports whether path is open with unsaved changes.
func (e *Editor) Dirty(path string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.bufs[path]
	return b != nil && b.dirty
}

// SaveAll saves every dirty buffer.
func (e *Editor) SaveAll() {
	e.t.Helper()
	e.mu.Lock()
	var paths []string
	for p, b := range e.bufs {
		if b.dirty {
			paths = append(paths, p)
		}
	}
	e.mu.Unlock()
	for _, p := range paths {
		e.Save(p)
	}
}

// ---- calls into agentd ----

// Call sends a request to agentd; without a deadline on ctx it gets Options.Timeout. An error
// answer comes back as *jsonrpc.WireError, whose text is the message as a client library hands
// it to its caller.
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	err := e.conn.Call(ctx, method, params, result)
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		return &jsonrpc.WireError{Code: jsonrpc.Code(re.Code), Message: re.Message, Data: re.Data}
	}
	return err
}

// Notify sends a notification to agentd.
func (e *Editor) Notify(ctx context.Context, method string, params any) error {
	return e.conn.Notify(ctx, method, params)
}

// Initialize runs the LSP handshake (initialize, initialized) with the editor's capabilities
// and returns agentd's InitializeResult. The position encoding agentd picked becomes the
// editor's.
func (e *Editor) Initialize(ctx context.Context, rootDir string) (json.RawMessage, error) {
	encs := e.opts.PositionEncodings
	if encs == nil {
		encs = []string{"utf-16"}
	}
	params := map[string]any{
		"processId":  os.Getpid(),
		"clientInfo": map[string]any{"name": "fakeeditor", "version": "1"},
		"rootUri":    editorbridge.FileURI(rootDir),
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": encs},
			"workspace": map[string]any{
				"applyEdit": e.opts.ApplyEdit,
				"workspaceEdit": map[string]any{
					"documentChanges":    e.opts.DocumentChanges,
					"resourceOperations": e.opts.ResourceOps,
				},
			},
			"window": map[string]any{"showDocument": map[string]any{"support": e.opts.ShowDocument != nil}},
		},
		"initializationOptions": map[string]any{
			"agent": protocol.AgentInitOptions{
				ProtocolVersion:    protocol.ProtocolVersion,
				ClientInfo:         &protocol.ClientInfo{Name: "fakeeditor"},
				ClientCapabilities: e.opts.Agent,
				Settings:           e.opts.Settings,
			},
		},
	}
	if len(e.opts.WorkspaceFolders) > 0 {
		var folders []any
		for _, f := range e.opts.WorkspaceFolders {
			folders = append(folders, map[string]any{"uri": editorbridge.FileURI(f), "name": filepath.Base(f)})
		}
		params["workspaceFolders"] = folders
	}
	var res json.RawMessage
	if err := e.Call(ctx, "initialize", params, &res); err != nil {
		return nil, err
	}
	var parsed struct {
		Capabilities struct {
			PositionEncoding string `json:"positionEncoding"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(res, &parsed); err != nil {
		return res, fmt.Errorf("InitializeResult: %w", err)
	}
	e.mu.Lock()
	if parsed.Capabilities.PositionEncoding != "" {
		e.enc = workspace.PositionEncoding(parsed.Capabilities.PositionEncoding)
	} else {
		e.enc = workspace.UTF16
	}
	e.mu.Unlock()
	return res, e.Notify(ctx, "initialized", map[string]any{})
}

// NewSession opens an agent session rooted at cwd.
func (e *Editor) NewSession(ctx context.Context, cwd string, additional ...string) (protocol.SessionNewResult, error) {
	var res protocol.SessionNewResult
	err := e.Call(ctx, protocol.MethodSessionNew, protocol.SessionNewParams{Cwd: cwd, AdditionalDirectories: additional}, &res)
	return res, err
}

// Prompt sends one text prompt and waits for the turn to end.
func (e *Editor) Prompt(ctx context.Context, sessionID, text string) (protocol.PromptResult, error) {
	var res protocol.PromptResult
	err := e.Call(ctx, protocol.MethodSessionPrompt, protocol.PromptParams{
		SessionID: sessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock(text)},
	}, &res)
	return res, err
}

// Shutdown sends shutdown and exit.
func (e *Editor) Shutdown(ctx context.Context) error {
	if err := e.Call(ctx, "shutdown", nil, nil); err != nil {
		return err
	}
	return e.Notify(ctx, "exit", nil)
}

// Done is closed when the connection has ended.
func (e *Editor) Done() <-chan struct{} { return e.conn.Done() }

// ---- serving agentd ----

func (e *Editor) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	method, params := req.Method(), req.Params()
	if !req.IsCall() {
		e.notification(method, params)
		return nil, nil
	}
	// Noted in arrival order; served on a goroutine of its own, since serving may wait.
	e.mu.Lock()
	e.requests = append(e.requests, Request{Method: method, Params: params})
	e.changedLocked()
	e.mu.Unlock()
	return jsonrpc.Later(func() (any, error) {
		if slices.Contains(e.opts.Unanswered, method) {
			select {
			case <-ctx.Done():
			case <-e.stop:
			}
			return nil, rpcErr(protocol.CodeRequestCancelled, "%s: never answered", method)
		}
		return e.serve(method, params)
	}), nil
}

func (e *Editor) notification(method string, params json.RawMessage) {
	if method == "window/showMessage" {
		var m ShownMessage
		if err := json.Unmarshal(params, &m); err != nil {
			e.errorf("malformed %s: %v: %s", method, err, params)
			return
		}
		e.mu.Lock()
		e.shown = append(e.shown, m)
		e.changedLocked()
		e.mu.Unlock()
		return
	}
	if method != protocol.MethodSessionUpdate {
		return
	}
	var n protocol.SessionNotification
	if err := json.Unmarshal(params, &n); err != nil {
		e.errorf("malformed %s: %v: %s", method, err, params)
		return
	}
	e.mu.Lock()
	e.updates = append(e.updates, n)
	e.changedLocked()
	e.mu.Unlock()
}

func rpcErr(code int, format string, args ...any) error {
	return jsonrpc.Errorf(jsonrpc.Code(code), format, args...)
}

func decode[T any](params json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(params, &v); err != nil {
		return v, rpcErr(protocol.CodeInvalidParams, "invalid params: %v", err)
	}
	return v, nil
}

func (e *Editor) serve(method string, params json.RawMessage) (any, error) {
	a := e.opts.Agent
	advertised := map[string]bool{
		protocol.MethodReadTextFile:      a.FS.ReadTextFile,
		protocol.MethodDirtyBuffers:      a.DirtyBuffers,
		protocol.MethodDiagnostics:       a.Diagnostics,
		protocol.MethodRequestPermission: a.Permissions.UI,
		protocol.MethodSecretsGet:        a.Secrets,
		protocol.MethodSaveBuffers:       a.SaveBuffers,
		protocol.MethodWorkspaceSymbols:  a.WorkspaceSymbols,
		protocol.MethodApplyEdit:         e.opts.ApplyEdit,
		protocol.MethodEditorState:       a.EditorState,
		protocol.MethodElicitationCreate: a.Elicitation != nil && e.opts.Elicit != nil,
		protocol.MethodShowDocument:      e.opts.ShowDocument != nil,
	}
	adv, known := advertised[method]
	if adv && slices.Contains(e.opts.Unimplemented, method) {
		return nil, rpcErr(protocol.CodeMethodNotFound, "method not found: %s", method)
	}
	if !known || !adv {
		if known {
			e.errorf("agentd sent %s, which this editor did not advertise", method)
		}
		return nil, rpcErr(protocol.CodeMethodNotFound, "method not found: %s", method)
	}
	switch method {
	case protocol.MethodShowDocument:
		p, err := decode[protocol.ShowDocumentParams](params)
		if err != nil {
			return nil, err
		}
		return protocol.ShowDocumentResult{Success: e.opts.ShowDocument(p.URI, p.External)}, nil
	case protocol.MethodReadTextFile:
		p, err := decode[protocol.ReadTextFileParams](params)
		if err != nil {
			return nil, err
		}
		return e.readTextFile(p)
	case protocol.MethodDirtyBuffers:
		e.mu.Lock()
		defer e.mu.Unlock()
		res := protocol.DirtyBuffersResult{Buffers: []protocol.DirtyBuffer{}}
		for p, b := range e.bufs {
			if b.dirty {
				v := b.version
				res.Buffers = append(res.Buffers, protocol.DirtyBuffer{Path: p, Version: &v})
			}
		}
		slices.SortFunc(res.Buffers, func(x, y protocol.DirtyBuffer) int { return strings.Compare(x.Path, y.Path) })
		return res, nil
	case protocol.MethodDiagnostics:
		p, err := decode[protocol.DiagnosticsParams](params)
		if err != nil {
			return nil, err
		}
		return e.diagnostics(p)
	case protocol.MethodWorkspaceSymbols:
		p, err := decode[protocol.WorkspaceSymbolsParams](params)
		if err != nil {
			return nil, err
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		res := protocol.WorkspaceSymbolsResult{Symbols: []json.RawMessage{}}
		for _, s := range e.symbols {
			if strings.Contains(strings.ToLower(s.Name), strings.ToLower(p.Query)) {
				b, _ := json.Marshal(s)
				res.Symbols = append(res.Symbols, b)
			}
		}
		return res, nil
	case protocol.MethodSaveBuffers:
		p, err := decode[protocol.SaveBuffersParams](params)
		if err != nil {
			return nil, err
		}
		return e.saveBuffers(p), nil
	case protocol.MethodSecretsGet:
		p, err := decode[protocol.SecretsGetParams](params)
		if err != nil {
			return nil, err
		}
		if v, ok := e.opts.Secrets[p.Key]; ok {
			return protocol.SecretsGetResult{Value: &v}, nil
		}
		return protocol.SecretsGetResult{}, nil
	case protocol.MethodRequestPermission:
		p, err := decode[protocol.RequestPermissionParams](params)
		if err != nil {
			return nil, err
		}
		return e.permission(p), nil
	case protocol.MethodElicitationCreate:
		p, err := decode[protocol.ElicitationParams](params)
		if err != nil {
			return nil, err
		}
		return e.opts.Elicit(p), nil
	case protocol.MethodEditorState:
		if _, err := decode[protocol.EditorStateParams](params); err != nil {
			return nil, err
		}
		return e.editorState(), nil
	case protocol.MethodApplyEdit:
		p, err := decode[editWire](params)
		if err != nil {
			return nil, err
		}
		return e.applyEdit(p), nil
	}
	return nil, rpcErr(protocol.CodeMethodNotFound, "method not found: %s", method)
}

func (e *Editor) readTextFile(p protocol.ReadTextFileParams) (any, error) {
	if !filepath.IsAbs(p.Path) {
		e.errorf("read_text_file with a relative path %q", p.Path)
		return nil, rpcErr(protocol.CodeInvalidParams, "path must be absolute: %s", p.Path)
	}
	e.mu.Lock()
	b := e.bufs[p.Path]
	var text string
	meta := protocol.Meta{}
	if b != nil {
		text = b.text
		meta["agentd/version"] = b.version
		meta["agentd/dirty"] = b.dirty
	}
	e.mu.Unlock()
	if b == nil {
		d, ok := diskText(p.Path)
		if !ok {
			return nil, rpcErr(protocol.CodeServerNotInit, "file not found: %s", p.Path)
		}
		text = d
		meta = nil
	}
	if p.Line != nil || p.Limit != nil {
		lines := strings.SplitAfter(text, "\n")
		start := 0
		if p.Line != nil && *p.Line > 1 {
			start = min(*p.Line-1, len(lines))
		}
		end := len(lines)
		if p.Limit != nil {
			end = min(start+*p.Limit, end)
		}
		text = strings.Join(lines[start:end], "")
	}
	return protocol.ReadTextFileResult{Content: text, Meta: meta}, nil
}

func (e *Editor) diagnostics(p protocol.DiagnosticsParams) (any, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	paths := p.Paths
	if len(paths) == 0 {
		for path := range e.diags {
			paths = append(paths, path)
		}
		slices.Sort(paths)
	}
	res := protocol.DiagnosticsResult{Items: []protocol.FileDiagnostics{}}
	for _, path := range paths {
		item := protocol.FileDiagnostics{Path: path, Diagnostics: []json.RawMessage{}}
		for _, d := range e.diags[path] {
			b, _ := json.Marshal(d)
			item.Diagnostics = append(item.Diagnostics, b)
		}
		res.Items = append(res.Items, item)
	}
	return res, nil
}

func (e *Editor) saveBuffers(p protocol.SaveBuffersParams) protocol.SaveBuffersResult {
	res := protocol.SaveBuffersResult{Saved: []string{}, Failed: []protocol.SaveFailed{}}
	for _, path := range p.Paths {
		e.mu.Lock()
		reason, fail := e.saveFail[path]
		_, open := e.bufs[path]
		e.mu.Unlock()
		switch {
		case fail:
			res.Failed = append(res.Failed, protocol.SaveFailed{Path: path, Reason: reason})
		case !open:
			if _, ok := diskText(path); ok {
				res.Saved = append(res.Saved, path) // nothing unsaved: already on disk
			} else {
				res.Failed = append(res.Failed, protocol.SaveFailed{Path: path, Reason: "no such buffer"})
			}
		default:
			if err := e.save(path); err != nil {
				res.Failed = append(res.Failed, protocol.SaveFailed{Path: path, Reason: err.Error()})
			} else {
				res.Saved = append(res.Saved, path)
			}
		}
	}
	return res
}

func (e *Editor) permission(p protocol.RequestPermissionParams) protocol.RequestPermissionResult {
	e.mu.Lock()
	e.permissions = append(e.permissions, p)
	var answer string
	scripted := len(e.permQueue) > 0
	if scripted {
		answer, e.permQueue = e.permQueue[0], e.permQueue[1:]
	}
	e.changedLocked()
	e.mu.Unlock()
	var out protocol.PermissionOutcome
	switch {
	case scripted && answer == "cancelled":
		out = protocol.PermissionOutcome{Outcome: "cancelled"}
	case scripted:
		if !slices.ContainsFunc(p.Options, func(o protocol.PermissionOption) bool { return o.OptionID == answer }) {
			e.errorf("scripted answer %q is not among the offered options %v", answer, p.Options)
		}
		out = protocol.PermissionOutcome{Outcome: "selected", OptionID: answer}
	case e.opts.Permission != nil:
		out = e.opts.Permission(p)
	default:
		e.errorf("unexpected permission request for %q (script an answer with AnswerPermissions)", p.ToolCall.Title)
		out = protocol.PermissionOutcome{Outcome: "cancelled"}
	}
	return protocol.RequestPermissionResult{Outcome: out}
}
