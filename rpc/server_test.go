package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/session"
	"github.com/agentd-dev/agentd/workspace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeSessions stands in for session.Manager so the transport is tested on its own; it checks
// params with session.Validate, as the Manager does.
type fakeSessions struct {
	deps session.Deps

	mu        sync.Mutex
	cancelled []string
	shutdowns int

	prompt func(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error)
	list   func(ctx context.Context) (protocol.SessionListResult, error)
	newFn  func(ctx context.Context, p protocol.SessionNewParams) (protocol.SessionNewResult, error)
}

func (f *fakeSessions) New(ctx context.Context, p protocol.SessionNewParams) (protocol.SessionNewResult, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.SessionNewResult{}, err
	}
	if f.newFn != nil {
		return f.newFn(ctx, p)
	}
	return protocol.SessionNewResult{SessionID: "s1", ConfigOptions: []protocol.ConfigOption{}}, nil
}
func (f *fakeSessions) Load(ctx context.Context, p protocol.SessionLoadParams) (protocol.SessionLoadResult, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.SessionLoadResult{}, err
	}
	if p.SessionID != "s1" {
		return protocol.SessionLoadResult{}, fmt.Errorf("%w: %q", session.ErrUnknownSession, p.SessionID)
	}
	f.deps.Client.Update(p.SessionID, protocol.SessionUpdate{SessionUpdate: protocol.UpdateUserMessageChunk, Content: &protocol.ContentBlock{Type: "text", Text: "hello"}})
	return protocol.SessionLoadResult{ConfigOptions: []protocol.ConfigOption{}}, nil
}
func (f *fakeSessions) Resume(ctx context.Context, p protocol.SessionLoadParams) (protocol.SessionLoadResult, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.SessionLoadResult{}, err
	}
	return protocol.SessionLoadResult{ConfigOptions: []protocol.ConfigOption{}}, nil
}
func (f *fakeSessions) Fork(ctx context.Context, p protocol.SessionForkParams) (protocol.SessionForkResult, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.SessionForkResult{}, err
	}
	return protocol.SessionForkResult{}, fmt.Errorf("%w: %q", session.ErrUnknownSession, p.SessionID)
}
func (f *fakeSessions) Checkpoints(ctx context.Context, p protocol.SessionIDParams) (protocol.CheckpointListResult, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.CheckpointListResult{}, err
	}
	return protocol.CheckpointListResult{}, fmt.Errorf("%w: %q", session.ErrUnknownSession, p.SessionID)
}
func (f *fakeSessions) RestoreCheckpoint(ctx context.Context, p protocol.CheckpointRestoreParams) (protocol.CheckpointRestoreResult, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.CheckpointRestoreResult{}, err
	}
	return protocol.CheckpointRestoreResult{}, fmt.Errorf("%w: %q", session.ErrUnknownSession, p.SessionID)
}
func (f *fakeSessions) List(ctx context.Context, p protocol.SessionListParams) (protocol.SessionListResult, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.SessionListResult{}, err
	}
	if f.list != nil {
		return f.list(ctx)
	}
	return protocol.SessionListResult{}, nil
}
func (f *fakeSessions) Close(ctx context.Context, id string) error {
	return session.Validate(&protocol.SessionIDParams{SessionID: id})
}
func (f *fakeSessions) Delete(ctx context.Context, id string) error {
	if err := session.Validate(&protocol.SessionIDParams{SessionID: id}); err != nil {
		return err
	}
	return fmt.Errorf("%w: %q", session.ErrUnknownSession, id)
}
func (f *fakeSessions) Prompt(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.PromptResult{}, err
	}
	if f.prompt != nil {
		return f.prompt(ctx, p)
	}
	return protocol.PromptResult{StopReason: protocol.StopEndTurn}, nil
}
func (f *fakeSessions) Cancel(id string) {
	if id == "panic" {
		panic("boom")
	}
	f.mu.Lock()
	f.cancelled = append(f.cancelled, id)
	f.mu.Unlock()
}
func (f *fakeSessions) SetConfigOption(ctx context.Context, p protocol.SetConfigOptionParams) (protocol.SetConfigOptionResult, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.SetConfigOptionResult{}, err
	}
	if p.ConfigID != "mode" {
		return protocol.SetConfigOptionResult{}, &session.ParamError{Field: "configId", Message: fmt.Sprintf("unknown config option %q", p.ConfigID)}
	}
	return protocol.SetConfigOptionResult{ConfigOptions: []protocol.ConfigOption{}}, nil
}
func (f *fakeSessions) Grants(ctx context.Context, p protocol.SessionIDParams) (protocol.GrantsListResult, error) {
	return protocol.GrantsListResult{}, session.Validate(&p)
}
func (f *fakeSessions) RevokeGrant(ctx context.Context, p protocol.GrantRevokeParams) (protocol.GrantRevokeResult, error) {
	return protocol.GrantRevokeResult{}, session.Validate(&p)
}
func (f *fakeSessions) Shutdown(ctx context.Context) error {
	f.mu.Lock()
	f.shutdowns++
	f.mu.Unlock()
	return nil
}

// fakeBridge is the editor bridge over the connection, as thin as the real one's transport.
type fakeBridge struct {
	c    *jsonrpc.Conn
	caps Capabilities
}

type fakeClient struct{ c *jsonrpc.Conn }

func (f fakeClient) Update(id string, u protocol.SessionUpdate) {
	_ = f.c.Notify(context.Background(), protocol.MethodSessionUpdate, &protocol.SessionNotification{SessionID: id, Update: u})
}
func (f fakeClient) RequestPermission(ctx context.Context, p protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
	var r protocol.RequestPermissionResult
	err := f.c.Call(ctx, protocol.MethodRequestPermission, p, &r)
	return r, err
}
func (f fakeClient) CanAskPermission() bool { return true }

func (b *fakeBridge) Client() session.Client { return fakeClient{b.c} }
func (b *fakeBridge) Workspace(string, *workspace.Roots) workspace.Workspace {
	return nil
}
func (b *fakeBridge) Secret(ctx context.Context, key string) (string, bool, error) {
	var r protocol.SecretsGetResult
	if err := b.c.Call(ctx, protocol.MethodSecretsGet, protocol.SecretsGetParams{Key: key}, &r); err != nil {
		return "", false, err
	}
	if r.Value == nil {
		return "", false, nil
	}
	return *r.Value, true, nil
}

type engine struct {
	mu     sync.Mutex
	fake   *fakeSessions
	bridge *fakeBridge
}

func (e *engine) options(opts Options) Options {
	if e.fake == nil {
		e.fake = &fakeSessions{}
	}
	opts.NewBridge = func(c *jsonrpc.Conn, caps Capabilities, log *zap.Logger) Bridge {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.bridge = &fakeBridge{c: c, caps: caps}
		return e.bridge
	}
	opts.NewSessions = func(d session.Deps) Sessions {
		e.fake.deps = d
		return e.fake
	}
	return opts
}

func TestRequestBeforeInitialize(t *testing.T) {
	h := startServer(t, Options{})
	wantError(t, h.call(protocol.MethodSessionNew, map[string]any{"cwd": "/tmp"}), -32002, "not initialized")
	// A notification before initialize is dropped, not fatal.
	h.notify(protocol.MethodSessionCancel, map[string]any{"sessionId": "x"})
	var res initializeResult
	wantResult(t, h.initialize(t, nil), &res)
	wantError(t, h.call("initialize", map[string]any{}), -32600, "already initialized")
}

func TestInitializeNegotiation(t *testing.T) {
	e := &engine{}
	h := startServer(t, e.options(Options{Version: "1.2.3"}))
	m := h.initialize(t, map[string]any{
		"processId": 1,
		"capabilities": map[string]any{
			"general":   map[string]any{"positionEncodings": []string{"utf-32", "utf-16"}},
			"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true, "resourceOperations": []string{"create", "rename"}}},
		},
		"initializationOptions": map[string]any{"agent": map[string]any{
			"protocolVersion":    7,
			"clientInfo":         map[string]any{"name": "test"},
			"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true}, "permissions": map[string]any{"ui": true}, "secrets": true},
			"settings":           map[string]any{"mode": "auto"},
		}},
	})
	var raw map[string]any
	wantResult(t, m, &raw)
	var res initializeResult
	wantResult(t, m, &res)
	if res.ServerInfo.Name != "agentd" || res.ServerInfo.Version != "1.2.3" {
		t.Errorf("serverInfo = %+v", res.ServerInfo)
	}
	if res.Capabilities.PositionEncoding != "utf-32" {
		t.Errorf("positionEncoding = %q", res.Capabilities.PositionEncoding)
	}
	a := res.Capabilities.Experimental.Agent
	if a.ProtocolVersion != protocol.ProtocolVersion || !a.AgentCapabilities.LoadSession || a.AgentCapabilities.SessionCapabilities.Resume == nil {
		t.Errorf("agent capabilities = %+v", a)
	}
	if len(a.Providers) == 0 {
		t.Error("no providers advertised")
	}
	if _, ok := raw["capabilities"].(map[string]any)["textDocumentSync"]; ok {
		t.Error("textDocumentSync advertised")
	}
	caps := e.bridge.caps
	if !caps.ApplyEdit || !caps.DocumentChanges || strings.Join(caps.ResourceOps, ",") != "create,rename" || caps.PositionEncoding != "utf-32" ||
		!caps.Agent.FS.ReadTextFile || !caps.Agent.Permissions.UI || !caps.Agent.Secrets {
		t.Errorf("bridge capabilities = %+v", caps)
	}
	if got := e.fake.deps.Settings().Mode; got != "auto" {
		t.Errorf("initializationOptions settings not applied: mode %q", got)
	}
}

func TestInitializeDefaultsToUTF16(t *testing.T) {
	for _, offered := range [][]string{nil, {"utf-16"}, {"utf-7", "utf-16"}} {
		h := startServer(t, Options{})
		var res initializeResult
		wantResult(t, h.initialize(t, map[string]any{"capabilities": map[string]any{"general": map[string]any{"positionEncodings": offered}}}), &res)
		if res.Capabilities.PositionEncoding != "utf-16" {
			t.Errorf("%v: positionEncoding = %q", offered, res.Capabilities.PositionEncoding)
		}
	}
}

func TestInitializeBadSettingNamesKey(t *testing.T) {
	h := startServer(t, Options{Registry: checkingRegistry()})
	m := h.initialize(t, map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"agent": map[string]any{
		"settings": map[string]any{"providers": map[string]any{"ollama": map[string]any{"baseUrl": "nope"}}}}}})
	wantError(t, m, -32602, "initializationOptions.agent.settings.providers.ollama.baseUrl: the base URL \"nope\" must start with https://")
	m = h.initialize(t, map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"agent": map[string]any{"protocolVersion": "one"}}})
	wantError(t, m, -32602, "initializationOptions.agent.protocolVersion: expected number, got string")
	m = h.initialize(t, map[string]any{"capabilities": map[string]any{}, "processId": "abc"})
	wantError(t, m, -32602, "processId: expected number, got string")
	m = h.initialize(t, map[string]any{"capabilities": map[string]any{"general": map[string]any{"positionEncodings": "utf-8"}}})
	wantError(t, m, -32602, "capabilities.general.positionEncodings: expected array")
	m = h.initialize(t, map[string]any{"capabilities": map[string]any{}, "rootUri": 5})
	wantError(t, m, -32602, "rootUri: expected string")
}

// TestProjectConfigCannotLoosen: the project layer applies what describes or tightens (a lower
// maxTokens) and leaves out what it may not set (a key variable for a provider), which the
// sessions' notice names; the daemon with no mode from the editor stays in ask.
func TestProjectConfigCannotLoosen(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".agentd"), 0o755)
	os.WriteFile(filepath.Join(root, ".agentd", "config.json"), []byte(`{"maxTokens":1234,"mode":"auto","allowShell":true,"providers":{"anthropic":{"apiType":"anthropic","apiKeyEnv":"HOME"}}}`), 0o644)
	e := &engine{}
	h := startServer(t, e.options(Options{}))
	wantResult(t, h.initialize(t, map[string]any{"capabilities": map[string]any{}, "rootUri": "file://" + root}), nil)
	// The project layer is the session's (Deps.Project), not the store-wide settings'.
	if st := e.fake.deps.Settings(); st.MaxTokens == 1234 {
		t.Errorf("the project layer is store-wide")
	}
	gotRoot, set := e.fake.deps.Project(filepath.Join(root, "sub"))
	if gotRoot != root {
		t.Errorf("a session in %s/sub has project root %q", root, gotRoot)
	}
	st := set()
	if st.MaxTokens != 1234 {
		t.Errorf("project layer not applied: %d", st.MaxTokens)
	}
	if st.Providers["anthropic"].APIKeyEnv != "" || st.Mode != "ask" || st.AllowShell {
		t.Errorf("the project loosened the settings: %+v", st)
	}
	for _, k := range []string{"providers.anthropic.apiKeyEnv", "mode", "allowShell", "trustedProjects"} {
		if !strings.Contains(st.ProjectNotice, k) {
			t.Errorf("notice does not name %s: %s", k, st.ProjectNotice)
		}
	}
}

// On the LSP door each workspace folder's sessions get that folder's project file: folder 0's
// loosened layer does not reach a session in folder 1, nor does folder 1 lose its tightening.
func TestEachWorkspaceFolderHasItsOwnProjectLayer(t *testing.T) {
	loose, tight := t.TempDir(), t.TempDir()
	for root, content := range map[string]string{loose: `{"mode":"auto","allowShell":true}`, tight: `{"maxIterations":3,"allowShell":false}`} {
		os.MkdirAll(filepath.Join(root, ".agentd"), 0o755)
		os.WriteFile(filepath.Join(root, ".agentd", "config.json"), []byte(content), 0o644)
	}
	user := t.TempDir()
	e := &engine{}
	h := startServer(t, e.options(Options{}))
	wantResult(t, h.initialize(t, map[string]any{"capabilities": map[string]any{},
		"initializationOptions": map[string]any{"agent": map[string]any{"settings": map[string]any{"trustedProjects": []string{loose, user}}}},
		"workspaceFolders": []any{
			map[string]any{"uri": "file://" + loose, "name": "loose"},
			map[string]any{"uri": "file://" + tight, "name": "tight"},
		}}), nil)
	if r, set := e.fake.deps.Project(loose); r != loose || set().Mode != "auto" || !set().AllowShell {
		t.Errorf("the trusted folder does not loosen its own sessions: root %q %+v", r, set())
	}
	r, set := e.fake.deps.Project(filepath.Join(tight, "pkg"))
	if r != tight {
		t.Errorf("a session in the second folder has root %q", r)
	}
	if st := set(); st.Mode != "ask" || st.AllowShell || st.MaxIterations != 3 {
		t.Errorf("a session in the second folder runs with mode %q shell %v maxIterations %d", st.Mode, st.AllowShell, st.MaxIterations)
	}
}

func TestMethodErrors(t *testing.T) {
	e := &engine{}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	wantError(t, h.call("agent/nope", nil), -32601, "method not found: agent/nope")
	wantError(t, h.call(protocol.MethodSessionNew, nil), -32602, "cwd: required")
	wantError(t, h.call(protocol.MethodSessionNew, map[string]any{"cwd": "rel"}), -32602, `cwd: "rel" is not an absolute path`)
	wantError(t, h.call(protocol.MethodSessionNew, []any{1}), -32602, "params: must be an object")
	wantError(t, h.call(protocol.MethodSessionNew, map[string]any{"cwd": "/a", "additionalDirectories": []any{"/b", 3}}), -32602, "additionalDirectories[1]: expected string, got number")
	wantError(t, h.call(protocol.MethodSessionPrompt, map[string]any{"sessionId": 5}), -32602, "sessionId: expected string, got number")
	wantError(t, h.call(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s1", "prompt": []any{}}), -32602, "prompt: must hold at least one")
	wantError(t, h.call(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "x"}, map[string]any{"type": "video"}}}), -32602, `prompt[1].type: "video" is not one of`)
	wantError(t, h.call(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "image", "data": "AA"}}}), -32602, "prompt[0].mimeType: required")
	m := h.call(protocol.MethodSessionDelete, map[string]any{"sessionId": "zzz"})
	wantError(t, m, -32002, "unknown session")
	m = h.call(protocol.MethodSessionSetConfigOption, map[string]any{"sessionId": "s1", "configId": "colour", "value": "red"})
	wantError(t, m, -32602, "configId: unknown config option")
	if !strings.Contains(string(m.Error.Data), `"field":"configId"`) {
		t.Errorf("error data = %s", m.Error.Data)
	}
	// The daemon is still serving.
	var res protocol.SessionNewResult
	wantResult(t, h.call(protocol.MethodSessionNew, map[string]any{"cwd": "/a"}), &res)
	if res.SessionID != "s1" {
		t.Fatalf("session/new = %+v", res)
	}
}

// Without fakes the server builds the real engine: the session manager answers.
func TestDefaultEngineIsBuiltIn(t *testing.T) {
	h := startServer(t, Options{StateDir: t.TempDir()})
	h.initialize(t, nil)
	wantError(t, h.call(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}),
		-32002, "unknown session")
}

func TestLoadReplaysBeforeAnswer(t *testing.T) {
	e := &engine{}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	wantResult(t, h.call(protocol.MethodSessionLoad, map[string]any{"sessionId": "s1", "cwd": "/a"}), nil)
	// The replayed update was written before the answer, so it is already queued.
	select {
	case n := <-h.notes:
		var p protocol.SessionNotification
		json.Unmarshal(n.Params, &p)
		if n.Method != protocol.MethodSessionUpdate || p.Update.Content == nil || p.Update.Content.Text != "hello" {
			t.Fatalf("replay = %s %s", n.Method, n.Params)
		}
	default:
		t.Fatal("no replayed update before the load answer")
	}
	wantError(t, h.call(protocol.MethodSessionLoad, map[string]any{"sessionId": "s9", "cwd": "/a"}), -32002, `unknown session: "s9"`)
}

func TestCancelRequest(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	started := make(chan struct{}, 2)
	e.fake.list = func(ctx context.Context) (protocol.SessionListResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return protocol.SessionListResult{}, ctx.Err()
	}
	e.fake.prompt = func(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return protocol.PromptResult{StopReason: protocol.StopCancelled}, nil
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)

	id, ch := h.start(protocol.MethodSessionList, map[string]any{})
	<-started
	h.notify("$/cancelRequest", map[string]any{"id": id})
	wantError(t, h.wait(ch), -32800, "cancelled")

	// A cancelled prompt answers with a result, stopReason cancelled.
	id, ch = h.start(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	<-started
	h.notify("$/cancelRequest", map[string]any{"id": id})
	var pr protocol.PromptResult
	wantResult(t, h.wait(ch), &pr)
	if pr.StopReason != protocol.StopCancelled {
		t.Fatalf("stopReason = %q", pr.StopReason)
	}
	// Malformed and unknown cancels are ignored, not fatal.
	h.notify("$/cancelRequest", map[string]any{"id": map[string]any{}})
	h.notify("$/cancelRequest", "x")
	h.notify("$/cancelRequest", map[string]any{"id": 999})
	wantResult(t, h.call(protocol.MethodProvidersList, nil), nil)
}

func TestConcurrentRequestsAndReverseCalls(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	release := make(chan struct{})
	e.fake.list = func(ctx context.Context) (protocol.SessionListResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return protocol.SessionListResult{}, nil
	}
	e.fake.newFn = func(ctx context.Context, p protocol.SessionNewParams) (protocol.SessionNewResult, error) {
		// A reverse request from inside a handler must not deadlock the connection.
		r, err := e.fake.deps.Client.RequestPermission(ctx, protocol.RequestPermissionParams{SessionID: "s1"})
		if err != nil {
			return protocol.SessionNewResult{}, err
		}
		return protocol.SessionNewResult{SessionID: r.Outcome.OptionID}, nil
	}
	h := startServer(t, e.options(Options{}))
	h.onCall = func(m *wireMsg) (any, *wireErr) {
		return protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "selected", OptionID: "allow_once"}}, nil
	}
	h.initialize(t, nil)
	_, slow := h.start(protocol.MethodSessionList, map[string]any{})
	var res protocol.SessionNewResult
	wantResult(t, h.call(protocol.MethodSessionNew, map[string]any{"cwd": "/a"}), &res) // answered while list blocks
	if res.SessionID != "allow_once" {
		t.Fatalf("reverse call result = %+v", res)
	}
	close(release)
	wantResult(t, h.wait(slow), nil)
}

func TestNotificationsInOrder(t *testing.T) {
	e := &engine{}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	const n = 300
	for i := range n {
		h.notify(protocol.MethodSessionCancel, map[string]any{"sessionId": fmt.Sprint(i)})
	}
	wantResult(t, h.call(protocol.MethodProvidersList, nil), nil) // a barrier: notifications are inline
	e.fake.mu.Lock()
	defer e.fake.mu.Unlock()
	if len(e.fake.cancelled) != n {
		t.Fatalf("%d cancels handled, want %d", len(e.fake.cancelled), n)
	}
	for i, id := range e.fake.cancelled {
		if id != fmt.Sprint(i) {
			t.Fatalf("cancel %d was %s: out of order", i, id)
		}
	}
}

func TestPanicAnswersInternalError(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	e.fake.prompt = func(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
		var m map[string]int
		m["boom"]++ // nil map write
		return protocol.PromptResult{}, nil
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	wantError(t, h.call(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "x"}}}), -32603, "internal error")
	wantResult(t, h.call(protocol.MethodProvidersList, nil), nil)
}

func TestOutgoingCallCancelSendsCancelRequest(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	e.fake.newFn = func(ctx context.Context, p protocol.SessionNewParams) (protocol.SessionNewResult, error) {
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err := e.fake.deps.Client.RequestPermission(cctx, protocol.RequestPermissionParams{SessionID: "s1"})
		if !errors.Is(err, context.DeadlineExceeded) {
			return protocol.SessionNewResult{}, fmt.Errorf("want deadline, got %v", err)
		}
		return protocol.SessionNewResult{SessionID: "ok"}, nil
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil) // onCall nil: the client never answers
	_, ch := h.start(protocol.MethodSessionNew, map[string]any{"cwd": "/a"})
	req := h.request(protocol.MethodRequestPermission)
	cancel := h.note("$/cancelRequest")
	var cp struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(cancel.Params, &cp)
	if string(cp.ID) != string(req.ID) {
		t.Fatalf("$/cancelRequest id %s, request id %s", cp.ID, req.ID)
	}
	wantResult(t, h.wait(ch), nil)
}

func TestConnCallMapsClientErrors(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	e.fake.newFn = func(ctx context.Context, p protocol.SessionNewParams) (protocol.SessionNewResult, error) {
		_, err := e.fake.deps.Client.RequestPermission(ctx, protocol.RequestPermissionParams{SessionID: "s1"})
		var re *editorbridge.RPCError
		if !errors.As(err, &re) || re.Code != -32002 || re.Message != "gone" {
			return protocol.SessionNewResult{}, fmt.Errorf("want RPCError, got %v", err)
		}
		return protocol.SessionNewResult{SessionID: "ok"}, nil
	}
	h := startServer(t, e.options(Options{}))
	h.onCall = func(m *wireMsg) (any, *wireErr) { return nil, &wireErr{Code: -32002, Message: "gone"} }
	h.initialize(t, nil)
	wantResult(t, h.call(protocol.MethodSessionNew, map[string]any{"cwd": "/a"}), nil)
}

func TestInvalidRequestObjectIsAnswered(t *testing.T) {
	h := startServer(t, Options{})
	h.initialize(t, nil)
	h.mu.Lock()
	ch := make(chan *wireMsg, 1)
	h.pending["41"] = ch
	h.mu.Unlock()
	h.writeRaw([]byte(`{"id":41,"method":"agent/providers/list"}`))
	wantError(t, h.wait(ch), -32600, `"jsonrpc" member is missing`)
	h.mu.Lock()
	ch = make(chan *wireMsg, 1)
	h.pending["null"] = ch
	ch41 := make(chan *wireMsg, 1)
	h.pending["41"] = ch41
	h.mu.Unlock()
	h.writeRaw([]byte(`{"jsonrpc":"2.0","id":41}`)) // broken responses: logged, not answered
	h.writeRaw([]byte(`{"id":41,"result":{}}`))
	h.writeRaw([]byte(`[]`))
	wantError(t, h.wait(ch), -32600, "batch requests are not supported")
	select {
	case m := <-ch41:
		t.Fatalf("a broken response was answered as if it were a request: %+v", m)
	default:
	}
	wantResult(t, h.call(protocol.MethodProvidersList, nil), nil)
}

func TestMalformedFrameExits(t *testing.T) {
	for name, frame := range map[string]string{
		"bad length":    "Content-Length: abc\r\n\r\n{}",
		"no length":     "Content-Type: x\r\n\r\n{}",
		"huge length":   "Content-Length: 999999999999\r\n\r\n{}",
		"colonless hdr": "garbage\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			h := startServer(t, Options{})
			h.initialize(t, nil)
			io.WriteString(h.in, frame)
			h.waitExit(t) // nothing holds the exit: returning at all is the point
			if h.code != 1 || !errors.Is(h.err, jsonrpc.ErrMalformedFrame) {
				t.Errorf("code %d err %v", h.code, h.err)
			}
			select {
			case <-h.notes:
				t.Error("something was written after the malformed frame")
			default:
			}
		})
	}
}

func TestEOFExitsPromptly(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	started := make(chan struct{})
	e.fake.prompt = func(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
		close(started)
		<-ctx.Done() // a turn that runs until cancelled
		return protocol.PromptResult{StopReason: protocol.StopCancelled}, nil
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	h.start(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "x"}}})
	<-started
	h.in.Close()
	h.waitExit(t) // the turn runs until cancelled: Serve returning shows EOF cancelled it
	if h.code != 1 || h.err != nil {
		t.Errorf("code %d err %v", h.code, h.err)
	}
	if e.fake.shutdowns != 1 {
		t.Errorf("sessions shut down %d times", e.fake.shutdowns)
	}
}

func TestShutdownExit(t *testing.T) {
	e := &engine{}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	wantResult(t, h.call("shutdown", nil), nil)
	wantError(t, h.call(protocol.MethodSessionNew, map[string]any{"cwd": "/a"}), -32600, "shutting down")
	h.notify("exit", nil)
	h.waitExit(t)
	if h.code != 0 || h.err != nil {
		t.Fatalf("code %d err %v", h.code, h.err)
	}
	if e.fake.shutdowns != 1 {
		t.Fatalf("shutdowns = %d", e.fake.shutdowns)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	e := &engine{}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	h.notify("exit", nil)
	h.waitExit(t)
	if h.code != 1 || e.fake.shutdowns != 1 {
		t.Fatalf("code %d shutdowns %d", h.code, e.fake.shutdowns)
	}
}

func TestDidChangeConfiguration(t *testing.T) {
	e := &engine{}
	h := startServer(t, e.options(Options{Registry: checkingRegistry()}))
	h.initialize(t, nil)
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agent": map[string]any{"mode": "plan"}}})
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": nil}) // keeps the layer
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"providers": map[string]any{"ollama": map[string]any{"baseUrl": "x"}}}})
	w := h.note("window/showMessage")
	if !strings.Contains(string(w.Params), "providers.ollama.baseUrl: the base URL \\\"x\\\" must start with https://") {
		t.Fatalf("showMessage = %s", w.Params)
	}
	if m := e.fake.deps.Settings().Mode; m != "plan" {
		t.Fatalf("mode = %q", m)
	}
}

var _ = config.NewStore

// Many sessions run at once: two prompts of different sessions are both in their turn at the
// same time, and both answer.
func TestManySessionsAtOnce(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	var mu sync.Mutex
	running := map[string]bool{}
	both := make(chan struct{})
	e.fake.prompt = func(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
		mu.Lock()
		running[p.SessionID] = true
		if len(running) == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-ctx.Done():
			return protocol.PromptResult{StopReason: protocol.StopCancelled}, nil
		}
		return protocol.PromptResult{StopReason: protocol.StopEndTurn}, nil
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	text := []any{map[string]any{"type": "text", "text": "x"}}
	_, a := h.start(protocol.MethodSessionPrompt, map[string]any{"sessionId": "a", "prompt": text})
	_, b := h.start(protocol.MethodSessionPrompt, map[string]any{"sessionId": "b", "prompt": text})
	for _, ch := range []chan *wireMsg{a, b} {
		var r protocol.PromptResult
		wantResult(t, h.wait(ch), &r)
		if r.StopReason != protocol.StopEndTurn {
			t.Fatalf("stopReason %q", r.StopReason)
		}
	}
}

// A handler that ignores its context cannot keep the daemon alive past the grace period.
func TestStuckHandlerDoesNotHoldExit(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	stuck, release := make(chan struct{}), make(chan struct{})
	e.fake.prompt = func(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
		close(stuck)
		<-release // ignores ctx
		return protocol.PromptResult{StopReason: protocol.StopEndTurn}, nil
	}
	h := startServer(t, e.options(Options{}))
	defer close(release) // lets the handler end before goleak looks
	h.initialize(t, nil)
	h.start(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "x"}}})
	<-stuck
	h.in.Close()
	h.waitExit(t) // the handler never returns before release: Serve returning shows it did not wait
}

// When the process initialize named is gone, agentd exits as LSP asks.
func TestParentGoneExits(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	e := &engine{}
	h := startServer(t, e.options(Options{ParentPoll: 10 * time.Millisecond}))
	wantResult(t, h.initialize(t, map[string]any{"processId": cmd.Process.Pid, "capabilities": map[string]any{}}), nil)
	wantResult(t, h.call(protocol.MethodProvidersList, nil), nil) // still serving while it lives
	cmd.Process.Kill()
	cmd.Wait()
	h.waitExit(t)
	if h.code != 1 || e.fake.shutdowns != 1 {
		t.Fatalf("code %d shutdowns %d", h.code, e.fake.shutdowns)
	}
}

// A prompt sent before agent/session/cancel is answered cancelled, even when its handler had not
// reached the manager when the cancel was read (calls run concurrently, notifications inline).
func TestSessionCancelReachesPromptsReadBefore(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	e.fake.prompt = func(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
		select {
		case <-ctx.Done():
			return protocol.PromptResult{StopReason: protocol.StopCancelled}, nil
		case <-time.After(3 * time.Second):
			return protocol.PromptResult{StopReason: protocol.StopEndTurn}, nil
		}
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	text := []any{map[string]any{"type": "text", "text": "x"}}
	for range 20 {
		_, a := h.start(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s", "prompt": text})
		_, b := h.start(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s", "prompt": text})
		_, other := h.start(protocol.MethodSessionPrompt, map[string]any{"sessionId": "other", "prompt": text})
		h.notify(protocol.MethodSessionCancel, map[string]any{"sessionId": "s"})
		for _, ch := range []chan *wireMsg{a, b} {
			var r protocol.PromptResult
			wantResult(t, h.wait(ch), &r)
			if r.StopReason != protocol.StopCancelled {
				t.Fatalf("stopReason %q, want cancelled", r.StopReason)
			}
		}
		// Another session's prompt is untouched; end it with $/cancelRequest.
		wantResult(t, h.call(protocol.MethodProvidersList, nil), nil)
		select {
		case m := <-other:
			t.Fatalf("another session's prompt was answered: %s", m.Result)
		default:
		}
		h.mu.Lock()
		var otherID string
		for k, v := range h.pending {
			if v == other {
				otherID = k
			}
		}
		h.mu.Unlock()
		h.notify("$/cancelRequest", map[string]any{"id": json.RawMessage(otherID)})
		wantResult(t, h.wait(other), nil)
	}
}
func (f *fakeSessions) Programs(ctx context.Context, p protocol.SessionIDParams) (protocol.ProgramsListResult, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.ProgramsListResult{}, err
	}
	return protocol.ProgramsListResult{}, fmt.Errorf("%w: %q", session.ErrUnknownSession, p.SessionID)
}
func (f *fakeSessions) StopProgram(ctx context.Context, p protocol.ProgramStopParams) (protocol.Program, error) {
	if err := session.Validate(&p); err != nil {
		return protocol.Program{}, err
	}
	return protocol.Program{}, fmt.Errorf("%w: %q", session.ErrUnknownSession, p.SessionID)
}
