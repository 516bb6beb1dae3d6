// Package rpc is agentd's server: the handler chain over jsonrpc's connection (cancellation
// preempts, calls run concurrently, notifications run in order, panics are contained), the LSP lifecycle and negotiation, and one thin handler per agent/* method that
// decodes params and calls the session manager, which validates them. It owns the wire rules: which
// JSON-RPC error a failure becomes, and that nothing but frames reaches the output.
package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/completion"
	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/keys"
	"github.com/agentd-dev/agentd/session"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// Sessions is the session API the handlers call; *session.Manager implements it.
type Sessions interface {
	New(ctx context.Context, p protocol.SessionNewParams) (protocol.SessionNewResult, error)
	Load(ctx context.Context, p protocol.SessionLoadParams) (protocol.SessionLoadResult, error)
	Resume(ctx context.Context, p protocol.SessionLoadParams) (protocol.SessionLoadResult, error)
	Fork(ctx context.Context, p protocol.SessionForkParams) (protocol.SessionForkResult, error)
	Checkpoints(ctx context.Context, p protocol.SessionIDParams) (protocol.CheckpointListResult, error)
	RestoreCheckpoint(ctx context.Context, p protocol.CheckpointRestoreParams) (protocol.CheckpointRestoreResult, error)
	Programs(ctx context.Context, p protocol.SessionIDParams) (protocol.ProgramsListResult, error)
	StopProgram(ctx context.Context, p protocol.ProgramStopParams) (protocol.Program, error)
	List(ctx context.Context, p protocol.SessionListParams) (protocol.SessionListResult, error)
	Close(ctx context.Context, sessionID string) error
	Delete(ctx context.Context, sessionID string) error
	Prompt(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error)
	Cancel(sessionID string)
	SetConfigOption(ctx context.Context, p protocol.SetConfigOptionParams) (protocol.SetConfigOptionResult, error)
	Grants(ctx context.Context, p protocol.SessionIDParams) (protocol.GrantsListResult, error)
	RevokeGrant(ctx context.Context, p protocol.GrantRevokeParams) (protocol.GrantRevokeResult, error)
	Shutdown(ctx context.Context) error
}

// Bridge is the editor as the engine needs it, built on the connection once initialize has said
// what the client can do (editorbridge.Bridge).
type Bridge interface {
	Client() session.Client
	Workspace(sessionID string, roots *workspace.Roots) workspace.Workspace
	Secret(ctx context.Context, key string) (string, bool, error)
}

// editorBridge hands editorbridge's concrete client on as a session.Client.
type editorBridge struct{ *editorbridge.Bridge }

func (b editorBridge) Client() session.Client { return b.Bridge.Client() }

// Deadlines of agentd → client requests. A permission request waits for a human and gets a long
// one of its own; every other request gets the editorTimeoutSeconds setting, by default
// DefaultEditorTimeout, so an editor that never answers fails that tool call, not the turn.
const (
	PermissionCallTimeout = 30 * time.Minute
	DefaultEditorTimeout  = 60 * time.Second
)

// callTimeout is the deadline of one request to the editor, read from the settings as it starts.
func (s *Server) callTimeout(method string) time.Duration {
	if method == protocol.MethodRequestPermission || method == protocol.MethodElicitationCreate {
		return PermissionCallTimeout
	}
	if n := s.settings.Get().EditorTimeoutSeconds; n > 0 {
		return time.Duration(n) * time.Second
	}
	return DefaultEditorTimeout
}

// Capabilities is what initialize negotiated about the client, in the bridge's own terms.
type Capabilities = editorbridge.Capabilities

// Options configure a Server.
type Options struct {
	Version string
	Logger  *zap.Logger
	// Settings holds the user layer already; the server adds the project, initialize and
	// didChangeConfiguration layers. nil means built-in defaults.
	Settings *config.Store
	// Registry knows the provider dialects compiled in.
	Registry *providers.Registry
	Tools    *tools.Registry
	// Prompts is the prompt config the sessions render from; nil means the built-in set.
	Prompts  *prompts.Set
	StateDir string
	// NewBridge builds the editor bridge on the connection; nil means editorbridge's. Tests put
	// a fake in its place.
	NewBridge func(c *jsonrpc.Conn, caps Capabilities, log *zap.Logger) Bridge
	// NewSessions builds the session manager; nil means session.NewManager. Tests put a fake in
	// its place.
	NewSessions func(d session.Deps) Sessions
	// Secrets is agentd's own secret store (nil: none).
	Secrets keys.Store
	// MCPTokens keeps the MCP servers' OAuth tokens (nil: MCP servers do not sign in);
	// MCPClientIDURL is agentd's Client ID Metadata Document ("" for none).
	MCPTokens      session.NamedSecrets
	MCPClientIDURL string
	// ParentPoll is how often the process that initialize names (processId) is checked; when it
	// is gone agentd exits as LSP asks. 0 disables the check.
	ParentPoll time.Duration
	// ACP serves the ACP door (`agentd acp`): newline-delimited JSON-RPC with ACP's method names
	// and lifecycle (see acp.go) instead of the LSP door.
	ACP bool
	// ShutdownGrace bounds the whole exit path: turns stopping, stores flushing, handlers
	// draining (default 700 ms, so the contract's "within 1 s" holds).
	ShutdownGrace time.Duration
}

type lifecycle int

const (
	stateNew lifecycle = iota
	stateRunning
	stateShutdown
)

// Server serves one connection.
type Server struct {
	opts     Options
	log      *zap.Logger
	settings *config.Store
	methods  map[string]method
	notifs   map[string]func(ctx context.Context, params json.RawMessage) error
	provs    *ProviderSource
	acp      acpCodec // the ACP door's codec (acp.go)

	conn *jsonrpc.Conn

	mu       sync.Mutex
	state    lifecycle
	sessions Sessions
	bridge   Bridge
	caps     Capabilities
	// folders are the LSP door's workspace folders (initialize); a session's project root is
	// the one that holds its cwd.
	folders  []string
	inflight map[jsonrpc.ID]*inflight
	complete *completion.Engine // made at the first inline completion
	// afterComplete, set only by tests, runs once the engine has given a suggestion and before
	// it is answered: the window a newer request's supersede must still close.
	afterComplete func()
	// completionProblem is the completion settings' problem the user was last told of.
	completionProblem string

	exitOnce sync.Once
	exitCh   chan int
	readErr  chan error
	base     context.Context // the connection's context, ended when Serve winds down
	watchers sync.WaitGroup
}

type inflight struct {
	method  string
	session string // the sessionId of a prompt
	cancel  context.CancelCauseFunc
}

// cancelPrompts cancels, with errSessionCancel, every prompt of the session that was read
// before now: a prompt sent before agent/session/cancel is answered cancelled even when its
// handler has not queued it in the manager yet (calls run concurrently; notifications do not).
func (s *Server) cancelPrompts(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.inflight {
		if f.session == sessionID && f.method == protocol.MethodSessionPrompt {
			f.cancel(errSessionCancel)
		}
	}
}

// errCancelRequest is the cause of a context cancelled by $/cancelRequest.
var errCancelRequest = errors.New("cancelled by $/cancelRequest")

// errSessionCancel is the cause of a prompt context cancelled by agent/session/cancel.
var errSessionCancel = errors.New("cancelled by agent/session/cancel")

// NewServer returns a server; Serve runs it on one connection.
func NewServer(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Registry == nil {
		opts.Registry = providers.NewRegistry()
	}
	if opts.NewBridge == nil {
		opts.NewBridge = func(c *jsonrpc.Conn, caps Capabilities, log *zap.Logger) Bridge {
			return editorBridge{editorbridge.New(c, caps, log)}
		}
	}
	if opts.NewSessions == nil {
		opts.NewSessions = func(d session.Deps) Sessions { return session.NewManager(d) }
	}
	if opts.Settings == nil {
		opts.Settings = defaultSettings(opts.Registry, opts.Logger)
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 700 * time.Millisecond
	}
	s := &Server{
		opts: opts, log: opts.Logger, settings: opts.Settings,
		inflight: map[jsonrpc.ID]*inflight{},
		exitCh:   make(chan int, 1),
		readErr:  make(chan error, 1),
	}
	s.provs = &ProviderSource{Settings: opts.Settings, Registry: opts.Registry, Secrets: opts.Secrets, Log: opts.Logger}
	s.methods = s.table()
	if opts.ACP {
		s.acpTable(s.methods)
	}
	s.notifs = s.notificationTable()
	return s
}

// Providers is the provider source the server resolves providers with.
func (s *Server) Providers() *ProviderSource { return s.provs }

// Serve runs the protocol over r and w until exit, end of input, a malformed frame or ctx's
// end. It returns the process exit code the contract asks for (0 after shutdown + exit, 1
// otherwise) and, for a malformed frame or a broken transport, the error. Every goroutine it
// started has ended when it returns.
func (s *Server) Serve(ctx context.Context, r io.ReadCloser, w io.WriteCloser) (int, error) {
	var readOnce sync.Once
	co := jsonrpc.Options{
		Logger:    s.log,
		Preempter: preempter{s},
		Timeout:   s.callTimeout,
		OnReadEnd: func(err error) { readOnce.Do(func() { s.readErr <- err }) },
	}
	if s.opts.ACP {
		co.NDJSON, co.Translate = true, s.acp.translate
	}
	s.conn = jsonrpc.NewConn(r, w, co)

	base, cancel := context.WithCancel(ctx)
	defer cancel()
	s.base = base
	defer s.watchers.Wait()
	s.conn.Go(base, s.handle)

	code, err := 1, error(nil)
	select {
	case code = <-s.exitCh:
		s.log.Debug("exit notification", zap.Int("code", code))
	case err = <-s.readErr:
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
			s.log.Info("end of input; exiting")
			err = nil
			if s.opts.ACP {
				code = 0 // ACP has no exit notification: the end of input is the normal end
			}
		} else {
			s.log.Error("reading from the client failed; exiting", zap.Error(err))
		}
	case <-s.conn.Done():
		err = s.conn.Err()
	case <-ctx.Done():
		s.log.Info("stopping", zap.Error(context.Cause(ctx)))
	}

	// Stop every turn and flush stores (a no-op after shutdown), then tear the connection down,
	// all within one grace period so the process is gone within a second.
	deadline := time.Now().Add(s.opts.ShutdownGrace)
	s.mu.Lock()
	sessions, state := s.sessions, s.state
	s.state = stateShutdown
	s.mu.Unlock()
	cancel()
	if sessions != nil && state != stateShutdown {
		sctx, scancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		if serr := sessions.Shutdown(sctx); serr != nil {
			s.log.Warn("shutdown of sessions", zap.Error(serr))
		}
		scancel()
	}
	_ = s.conn.CloseStream()
	drain := time.NewTimer(max(time.Until(deadline), 50*time.Millisecond))
	defer drain.Stop()
	select {
	case <-s.conn.Done():
	case <-drain.C:
		s.log.Warn("connection did not drain in time; a handler ignores its context")
	}
	return code, err
}

// watchParent exits like the exit notification (code 1) once process pid is gone. It checks with
// a timer that re-arms itself, not a goroutine waiting on a ticker: nothing waits between checks,
// and a goroutine made at initialize grew its stack deep in time.NewTicker's first setting
// lookup, a copy that made several 64 KB windows of the binary's function tables resident for
// the daemon's whole life (docs/benchmarks.md, "Idle RSS, the last cuts").
func (s *Server) watchParent(pid int) {
	poll := s.opts.ParentPoll
	if poll <= 0 || pid <= 0 {
		return
	}
	var mu sync.Mutex // orders the re-arming against the stop at the end
	var t *time.Timer
	check := func() {
		defer s.watchers.Done()
		if s.base.Err() != nil {
			return
		}
		if !processAlive(pid) {
			s.log.Info("the client process is gone; exiting", zap.Int("processId", pid))
			s.exitOnce.Do(func() { s.exitCh <- 1 })
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if s.base.Err() == nil {
			s.watchers.Add(1)
			t.Reset(poll)
		}
	}
	mu.Lock()
	s.watchers.Add(1)
	t = time.AfterFunc(poll, check)
	mu.Unlock()
	context.AfterFunc(s.base, func() {
		mu.Lock()
		defer mu.Unlock()
		if t.Stop() { // a check that was due will not run: it counts as done
			s.watchers.Done()
		}
	})
}

// preempter answers $/cancelRequest on the read goroutine, ahead of everything queued behind
// it.
type preempter struct{ s *Server }

func (p preempter) Preempt(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if req.Method() != "$/cancelRequest" {
		return nil, jsonrpc.ErrNotHandled
	}
	var params struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(req.Params(), &params); err != nil {
		p.s.log.Warn("malformed $/cancelRequest ignored", zap.Error(err))
		return struct{}{}, nil
	}
	id := jsonrpc.ParseID(params.ID)
	p.s.mu.Lock()
	f := p.s.inflight[id]
	p.s.mu.Unlock()
	if f != nil {
		p.s.log.Debug("cancel request", zap.String("method", f.method), zap.Any("id", id))
		f.cancel(errCancelRequest)
	}
	return struct{}{}, nil
}

// handle is the handler chain below the preempter: notifications inline and in order, calls
// released to run concurrently (after their lifecycle check, which stays in order), every one
// under recover.
func (s *Server) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if !req.IsCall() {
		s.notification(ctx, req.Method(), req.Params())
		return nil, nil // a notification has no answer
	}
	method := req.Method()
	m, known := s.methods[method]

	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case method == "initialize":
		// inline: nothing after initialize runs before it answers
	case state == stateNew:
		return nil, jsonrpc.NewError(jsonrpc.ServerNotInitialized, fmt.Sprintf("%s: the server is not initialized; send initialize first", method))
	case state == stateShutdown:
		return nil, jsonrpc.NewError(jsonrpc.InvalidRequest, fmt.Sprintf("%s: the server is shutting down", method))
	}
	if !known {
		return nil, jsonrpc.NewError(jsonrpc.MethodNotFound, "method not found: "+method)
	}

	// The handler's context hangs off the connection's; $/cancelRequest and the end of the
	// connection cancel it.
	id := req.ID()
	hctx, cancel := context.WithCancelCause(ctx)
	// What the engine must send after this answer (session.AfterAnswer) waits for the ordered
	// writer to queue it.
	hctx = session.WithAfterAnswer(hctx, func(fn func()) { s.conn.AfterAnswer(id, fn) })
	hctx = withRequestID(hctx, id)
	f := &inflight{method: method, cancel: cancel}
	if method == protocol.MethodSessionPrompt {
		// Noted before the reader moves on, so an agent/session/cancel read after this prompt
		// reaches it even while its handler has not reached the manager yet.
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(req.Params(), &p) == nil {
			f.session = p.SessionID
		}
	}
	if method == MethodInlineCompletion {
		// Superseded as the reader reads the newer request, not once its goroutine runs: on a
		// busy machine that may be after the older answer was written.
		s.supersedeCompletion(id, req.Params())
	}
	s.mu.Lock()
	s.inflight[id] = f
	s.mu.Unlock()
	run := func() (any, error) {
		defer func() {
			cancel(nil)
			s.mu.Lock()
			delete(s.inflight, id)
			s.mu.Unlock()
		}()
		return s.call(hctx, method, m, req.Params())
	}
	if m.inline {
		return run()
	}
	return jsonrpc.Later(run), nil
}

func (s *Server) call(ctx context.Context, method string, m method, params json.RawMessage) (res any, err error) {
	start := time.Now()
	defer func() {
		if ce := s.log.Check(zap.DebugLevel, "request"); ce != nil {
			fields := []zap.Field{zap.String("method", method), zap.Duration("took", time.Since(start))}
			var we *jsonrpc.WireError
			if errors.As(err, &we) {
				fields = append(fields, zap.Int("code", int(we.Code)), zap.String("error", we.Message))
			}
			ce.Write(fields...)
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panicked", zap.String("method", method), zap.Any("panic", r), zap.Stack("stack"))
			res, err = nil, jsonrpc.NewError(jsonrpc.InternalError, fmt.Sprintf("%s: internal error: %v", method, r))
		}
	}()
	res, err = m.call(s, ctx, params)
	if err == nil {
		return res, nil
	}
	if errors.Is(context.Cause(ctx), errCancelRequest) {
		return nil, jsonrpc.NewError(jsonrpc.Code(protocol.CodeRequestCancelled), method+": request cancelled")
	}
	return nil, s.wireError(method, err)
}

// wireError maps an error to the JSON-RPC error the contract names.
func (s *Server) wireError(method string, err error) error {
	var we *jsonrpc.WireError
	if errors.As(err, &we) {
		return we
	}
	var pe *session.ParamError
	if errors.As(err, &pe) {
		return paramError(pe.Field, pe.Message)
	}
	var ke *config.KeyError
	if errors.As(err, &ke) {
		return paramError(ke.Key, ke.Msg)
	}
	if errors.Is(err, session.ErrUnknownSession) {
		return jsonrpc.NewError(jsonrpc.Code(protocol.CodeServerNotInit), err.Error())
	}
	if errors.Is(err, session.ErrBusy) {
		return jsonrpc.NewError(jsonrpc.Code(protocol.CodeRequestFailed), method+": "+err.Error())
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return jsonrpc.NewError(jsonrpc.Code(protocol.CodeRequestCancelled), method+": "+err.Error())
	}
	s.log.Warn("request failed", zap.String("method", method), zap.Error(err))
	return jsonrpc.NewError(jsonrpc.InternalError, method+": "+err.Error())
}

// paramError is the -32602 answer naming the field; data carries the field for programs.
func paramError(field, msg string) *jsonrpc.WireError {
	e := jsonrpc.NewError(jsonrpc.InvalidParams, "invalid params: "+(&config.KeyError{Key: field, Msg: msg}).Error())
	if field != "" {
		e.Data, _ = json.Marshal(map[string]string{"field": field})
	}
	return e
}

// notification handles one notification inline. It never fails: a bad notification is logged.
func (s *Server) notification(ctx context.Context, method string, params json.RawMessage) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("notification handler panicked", zap.String("method", method), zap.Any("panic", r), zap.Stack("stack"))
		}
	}()
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	if method == "exit" {
		code := 1
		if state == stateShutdown {
			code = 0
		}
		s.exitOnce.Do(func() { s.exitCh <- code })
		return
	}
	if state != stateRunning {
		s.log.Debug("notification dropped outside the running state", zap.String("method", method))
		return
	}
	n, ok := s.notifs[method]
	if !ok {
		s.log.Debug("notification ignored", zap.String("method", method))
		return
	}
	if err := n(ctx, params); err != nil {
		s.log.Warn("bad notification", zap.String("method", method), zap.Error(err))
	}
}
