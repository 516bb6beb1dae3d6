package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// ---- scripted provider ----

// reply is one scripted model response: either events, or a function that streams them.
type reply struct {
	events []providers.Event
	fn     func(ctx context.Context, yield func(providers.Event) bool)
}

type fakeProvider struct {
	mu      sync.Mutex
	replies []reply
	reqs    []*providers.Request
	// title answers tool-less requests (titles, summaries) out of band, reporting sideUsage
	// (none when zero).
	title     string
	sideUsage providers.Usage
	// started is signalled (non-blocking) at each tool-using Stream call.
	started chan struct{}
	closed  chan struct{} // signalled when a stream's ctx ends or the range stops early
}

func newFakeProvider(replies ...reply) *fakeProvider {
	return &fakeProvider{replies: replies, title: "Test title", started: make(chan struct{}, 64), closed: make(chan struct{}, 64)}
}

func (p *fakeProvider) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		if len(req.Tools) == 0 && (strings.Contains(req.System, "name coding conversations") || strings.Contains(req.System, "summaries")) {
			p.mu.Lock()
			title, u := p.title, p.sideUsage
			p.mu.Unlock()
			if strings.Contains(req.System, "summaries") {
				title = "SUMMARY of earlier work"
			}
			if !yield(providers.Event{Type: providers.EventTextDelta, Text: title}) {
				return
			}
			if u != (providers.Usage{}) && !yield(providers.Event{Type: providers.EventUsage, Usage: u}) {
				return
			}
			yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
			return
		}
		p.mu.Lock()
		cp := *req
		cp.Messages = slices.Clone(req.Messages)
		p.reqs = append(p.reqs, &cp)
		var r reply
		if len(p.replies) > 0 {
			r, p.replies = p.replies[0], p.replies[1:]
		} else {
			r = reply{events: textReply("script exhausted")}
		}
		p.mu.Unlock()
		select {
		case p.started <- struct{}{}:
		default:
		}
		stopped := false
		y := func(ev providers.Event) bool {
			if ctx.Err() != nil || !yield(ev) {
				stopped = true
				return false
			}
			return true
		}
		if r.fn != nil {
			r.fn(ctx, y)
		} else {
			for _, ev := range r.events {
				if !y(ev) {
					break
				}
			}
		}
		if stopped || ctx.Err() != nil {
			select {
			case p.closed <- struct{}{}:
			default:
			}
		}
	}
}

func (p *fakeProvider) requests() []*providers.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs)
}

func textReply(text string) []providers.Event {
	var evs []providers.Event
	for len(text) > 0 {
		n := min(len(text), 5)
		evs = append(evs, providers.Event{Type: providers.EventTextDelta, Text: text[:n]})
		text = text[n:]
	}
	return append(evs,
		providers.Event{Type: providers.EventUsage, Usage: providers.Usage{Input: 100, Output: 10}},
		providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
}

type tc struct {
	id, name, args string
}

func callsReply(calls ...tc) []providers.Event {
	var evs []providers.Event
	for i, c := range calls {
		evs = append(evs, providers.Event{Type: providers.EventToolCallStarted, Index: i, ToolCallID: c.id, ToolName: c.name})
		half := len(c.args) / 2
		evs = append(evs,
			providers.Event{Type: providers.EventToolCallArgsDelta, Index: i, ToolCallID: c.id, Text: c.args[:half]},
			providers.Event{Type: providers.EventToolCallArgsDelta, Index: i, ToolCallID: c.id, Text: c.args[half:]},
			providers.Event{Type: providers.EventToolCallCompleted, Index: i, ToolCallID: c.id, ToolName: c.name, Args: json.RawMessage(c.args)})
	}
	return append(evs,
		providers.Event{Type: providers.EventUsage, Usage: providers.Usage{Input: 200, Output: 20}},
		providers.Event{Type: providers.EventCompleted, StopReason: providers.StopToolUse})
}

type fakeSource struct {
	p   providers.Provider
	err error
}

func (s fakeSource) Provider(ctx context.Context, id string) (providers.Provider, providers.Config, error) {
	if s.err != nil {
		return nil, providers.Config{}, s.err
	}
	return s.p, providers.Config{ID: "fake", APIType: "fake", Model: "fake-model"}, nil
}

// ---- fake client ----

type fakeClient struct {
	mu      sync.Mutex
	updates []protocol.SessionUpdate
	perms   []protocol.RequestPermissionParams
	changed chan struct{}
	noUI    bool
	// answer answers a permission request; nil blocks until ctx ends.
	answer func(ctx context.Context, p protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error)
}

func newFakeClient() *fakeClient { return &fakeClient{changed: make(chan struct{}, 1)} }

func (c *fakeClient) poke() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *fakeClient) Update(id string, u protocol.SessionUpdate) {
	// Round-trip through JSON, as the wire would, to catch unmarshalable updates.
	b, err := json.Marshal(u)
	if err != nil {
		panic(fmt.Sprintf("update does not marshal: %v", err))
	}
	var back protocol.SessionUpdate
	if err := json.Unmarshal(b, &back); err != nil {
		panic(err)
	}
	c.mu.Lock()
	c.updates = append(c.updates, back)
	c.mu.Unlock()
	c.poke()
}

func (c *fakeClient) RequestPermission(ctx context.Context, p protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
	c.mu.Lock()
	c.perms = append(c.perms, p)
	answer := c.answer
	c.mu.Unlock()
	c.poke()
	if answer == nil {
		<-ctx.Done()
		return protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "cancelled"}}, ctx.Err()
	}
	return answer(ctx, p)
}

func (c *fakeClient) CanAskPermission() bool { return !c.noUI }

func (c *fakeClient) snapshot() []protocol.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.updates)
}

func (c *fakeClient) permissions() []protocol.RequestPermissionParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.perms)
}

// waitFor waits until cond holds on the updates, failing after a deadline.
func (c *fakeClient) waitFor(t *testing.T, what string, cond func([]protocol.SessionUpdate) bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		if cond(c.snapshot()) {
			return
		}
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; updates: %s", what, dumpUpdates(c.snapshot()))
		}
	}
}

func (c *fakeClient) waitPermission(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for len(c.permissions()) < n {
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for permission request %d", n)
		}
	}
}

func answerWith(option string) func(context.Context, protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
	return func(context.Context, protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
		return protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "selected", OptionID: option}}, nil
	}
}

func dumpUpdates(us []protocol.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		j, _ := json.Marshal(u)
		b.WriteString("\n  ")
		b.Write(j)
	}
	return b.String()
}

func kinds(us []protocol.SessionUpdate, kind string) []protocol.SessionUpdate {
	var out []protocol.SessionUpdate
	for _, u := range us {
		if u.SessionUpdate == kind {
			out = append(out, u)
		}
	}
	return out
}

func callUpdates(us []protocol.SessionUpdate, id string) []protocol.SessionUpdate {
	var out []protocol.SessionUpdate
	for _, u := range us {
		if (u.SessionUpdate == protocol.UpdateToolCall || u.SessionUpdate == protocol.UpdateToolCallUpdate) && u.ToolCallID == id {
			out = append(out, u)
		}
	}
	return out
}

func finalStatus(us []protocol.SessionUpdate, id string) string {
	st := ""
	for _, u := range callUpdates(us, id) {
		if u.Status != "" {
			st = u.Status
		}
	}
	return st
}

// ---- fake workspace ----

type fakeWS struct {
	mu    sync.Mutex
	files map[string]string
	// readDelay delays every read; readHook runs at the start of every read (its error fails
	// the read); editHook runs inside ApplyEdit before it applies.
	readDelay time.Duration
	readHook  func(ctx context.Context) error
	editHook  func(ctx context.Context) error
	edits     int
	dirty     map[string]bool // edited buffers not saved yet
	saved     []string
	noSave    bool
}

func (w *fakeWS) ReadFile(ctx context.Context, path string) (workspace.Doc, error) {
	if w.readHook != nil {
		if err := w.readHook(ctx); err != nil {
			return workspace.Doc{}, err
		}
	}
	if w.readDelay > 0 {
		select {
		case <-time.After(w.readDelay):
		case <-ctx.Done():
			return workspace.Doc{}, ctx.Err()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	text, ok := w.files[path]
	if !ok {
		return workspace.Doc{}, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	return workspace.Doc{Path: path, Text: text}, nil
}
func (w *fakeWS) DirtyBuffers(context.Context) ([]workspace.Buffer, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []workspace.Buffer
	for p := range w.dirty {
		out = append(out, workspace.Buffer{Path: p})
	}
	return out, nil
}
func (w *fakeWS) Diagnostics(context.Context, []string) ([]workspace.FileDiagnostics, error) {
	return nil, nil
}
func (w *fakeWS) WorkspaceSymbols(context.Context, string) ([]workspace.Symbol, error) {
	return nil, workspace.ErrUnsupported
}
func (w *fakeWS) SaveBuffers(_ context.Context, paths []string) (workspace.SaveResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.noSave {
		return workspace.SaveResult{}, workspace.ErrUnsupported
	}
	for _, p := range paths {
		delete(w.dirty, p)
	}
	w.saved = append(w.saved, paths...)
	return workspace.SaveResult{Saved: paths}, nil
}
func (w *fakeWS) ApplyEdit(ctx context.Context, label string, changes []workspace.Change) error {
	if w.editHook != nil {
		if err := w.editHook(ctx); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range changes {
		if c.Kind == workspace.ChangeEdit && w.files[c.Path] != c.OldText {
			return &workspace.NotAppliedError{Reason: "stale"}
		}
	}
	for _, c := range changes {
		w.files[c.Path] = c.NewText
		if w.dirty == nil {
			w.dirty = map[string]bool{}
		}
		w.dirty[c.Path] = true
	}
	w.edits++
	return nil
}

func (w *fakeWS) file(p string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.files[p]
}

// ---- test tools ----

type readTool struct{}

func (readTool) Name() string            { return "read_file" }
func (readTool) Description() string     { return "Read a file." }
func (readTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (readTool) Effect() tools.Effect    { return tools.EffectRead }
func (readTool) Kind() string            { return protocol.KindRead }
func (readTool) Title(args json.RawMessage) string {
	var a struct{ Path string }
	_ = json.Unmarshal(args, &a)
	if a.Path == "" {
		return "Read file"
	}
	return "Read " + a.Path
}
func (readTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) tools.Result {
	var a struct{ Path string }
	if err := json.Unmarshal(args, &a); err != nil {
		return tools.Errorf("bad arguments: %v", err)
	}
	p, err := env.Roots.Resolve(a.Path, false)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	doc, err := env.WS.ReadFile(ctx, p)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	return tools.Result{Output: doc.Text, Locations: []tools.Location{{Path: p}}}
}

type editTool struct{}

func (editTool) Name() string            { return "edit_file" }
func (editTool) Description() string     { return "Replace text in a file." }
func (editTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (editTool) Effect() tools.Effect    { return tools.EffectWrite }
func (editTool) Kind() string            { return protocol.KindEdit }
func (editTool) Title(json.RawMessage) string {
	return "Edit file"
}
func (editTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) tools.Result {
	var a struct{ Path, Old, New string }
	if err := json.Unmarshal(args, &a); err != nil {
		return tools.Errorf("bad arguments: %v", err)
	}
	p, err := env.Roots.Resolve(a.Path, true)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	doc, err := env.WS.ReadFile(ctx, p)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	if !strings.Contains(doc.Text, a.Old) {
		return tools.Errorf("old text not found")
	}
	newText := strings.Replace(doc.Text, a.Old, a.New, 1)
	diff := tools.Diff{Path: p, OldText: &doc.Text, NewText: &newText}
	if err := env.Permit(ctx, tools.PermissionRequest{Title: "Edit " + a.Path, Kind: protocol.KindEdit, Paths: []string{p}, Diffs: []tools.Diff{diff}}); err != nil {
		if tools.IsDenied(err) {
			return tools.Result{Output: err.Error(), IsError: true}
		}
		return tools.Errorf("not applied: %v", err)
	}
	if err := env.WS.ApplyEdit(ctx, "edit", []workspace.Change{{Kind: workspace.ChangeEdit, Path: p, OldText: doc.Text, NewText: newText}}); err != nil {
		return tools.Errorf("not applied: %v", err)
	}
	return tools.Result{Output: "edited " + a.Path, Diffs: []tools.Diff{diff}}
}

type runTool struct{}

func (runTool) Name() string                 { return "run_program" }
func (runTool) Description() string          { return "Runs a program." }
func (runTool) Schema() json.RawMessage      { return json.RawMessage(`{"type":"object"}`) }
func (runTool) Effect() tools.Effect         { return tools.EffectExec }
func (runTool) Kind() string                 { return protocol.KindExecute }
func (runTool) Title(json.RawMessage) string { return "Run go test" }
func (runTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) tools.Result {
	argv := []string{"go", "test", "./..."}
	if err := env.Permit(ctx, tools.PermissionRequest{Title: "Run go test", Kind: protocol.KindExecute, Command: argv, Cwd: env.Roots.Cwd()}); err != nil {
		return tools.Result{Output: err.Error(), IsError: true}
	}
	out := "ok  example 0.1s"
	if env.SaveBeforeExec != nil {
		if note := env.SaveBeforeExec(ctx); note != "" {
			out = "[" + note + "]\n" + out
		}
	}
	env.Progress("ok  example 0.1s")
	return tools.Result{Output: out}
}

type panicTool struct{}

func (panicTool) Name() string                 { return "explode" }
func (panicTool) Description() string          { return "Panics." }
func (panicTool) Schema() json.RawMessage      { return json.RawMessage(`{"type":"object"}`) }
func (panicTool) Effect() tools.Effect         { return tools.EffectRead }
func (panicTool) Kind() string                 { return protocol.KindOther }
func (panicTool) Title(json.RawMessage) string { return "Explode" }
func (panicTool) Run(context.Context, *tools.Env, json.RawMessage) tools.Result {
	panic("boom")
}

// ---- harness ----

type harness struct {
	t      *testing.T
	dir    string
	state  string
	ws     *fakeWS
	client *fakeClient
	prov   *fakeProvider
	m      *Manager
	set    config.Settings
	sid    string
	// tools, when set, replaces the test tools the manager offers.
	tools *tools.Registry
	// texts, when set, is the prompt config instead of the built-in one.
	texts *prompts.Set
}

func newHarness(t *testing.T, replies ...reply) *harness {
	t.Helper()
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	h := &harness{t: t, dir: dir, state: t.TempDir(), client: newFakeClient(), prov: newFakeProvider(replies...)}
	h.ws = &fakeWS{files: map[string]string{
		filepath.Join(dir, "a.txt"): "alpha\n",
		filepath.Join(dir, "b.txt"): "bravo\n",
	}}
	h.set = config.Settings{Provider: "fake", Providers: map[string]config.ProviderSettings{"fake": {APIType: "fake", Model: "fake-model"}}}
	h.m = h.manager()
	t.Cleanup(func() { _ = h.m.Shutdown(context.Background()) })
	return h
}

func (h *harness) manager() *Manager {
	reg := h.tools
	if reg == nil {
		reg = tools.NewRegistry(readTool{}, editTool{}, panicTool{}, runTool{})
	}
	return NewManager(Deps{
		Client:     h.client,
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return h.ws },
		Providers:  fakeSource{p: h.prov},
		Tools:      reg,
		Settings:   func() config.Settings { return h.set },
		StateDir:   h.state,
		// The signing key lives beside the state dir, never in it (nor in the user's config).
		StateKeyFile: h.state + ".key",
		Prompts:      h.texts,
	})
}

func (h *harness) newSession() string {
	h.t.Helper()
	res, err := h.m.New(context.Background(), protocol.SessionNewParams{Cwd: h.dir})
	if err != nil {
		h.t.Fatal(err)
	}
	h.sid = res.SessionID
	return res.SessionID
}

func (h *harness) prompt(text string) protocol.PromptResult {
	h.t.Helper()
	res, err := h.m.Prompt(context.Background(), protocol.PromptParams{SessionID: h.sid, Prompt: []protocol.ContentBlock{protocol.TextBlock(text)}})
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// promptAsync starts a prompt and returns a channel with its result.
func (h *harness) promptAsync(ctx context.Context, text string) <-chan protocol.PromptResult {
	ch := make(chan protocol.PromptResult, 1)
	go func() {
		res, err := h.m.Prompt(ctx, protocol.PromptParams{SessionID: h.sid, Prompt: []protocol.ContentBlock{protocol.TextBlock(text)}})
		if err != nil {
			res.StopReason = "error: " + err.Error()
		}
		ch <- res
	}()
	return ch
}

func waitResult(t *testing.T, ch <-chan protocol.PromptResult, within time.Duration) protocol.PromptResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(within):
		t.Fatalf("prompt did not answer within %v", within)
	}
	return protocol.PromptResult{}
}

func (h *harness) path(name string) string { return filepath.Join(h.dir, name) }

func toolResults(msgs []providers.Message) []providers.Part {
	var out []providers.Part
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == providers.PartToolResult {
				out = append(out, p)
			}
		}
	}
	return out
}

func toolsPermission(path string) tools.PermissionRequest {
	return tools.PermissionRequest{Title: "Edit", Kind: protocol.KindEdit, Paths: []string{path}}
}

func toolsCommand(argv []string) tools.PermissionRequest {
	return tools.PermissionRequest{Title: "Run", Kind: protocol.KindExecute, Command: argv}
}
