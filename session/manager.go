package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// Deps is everything the manager is built from. The rpc server and `agentd exec` fill it.
type Deps struct {
	Client     Client
	Workspaces WorkspaceFactory
	Providers  ProviderSource
	Tools      *tools.Registry
	Settings   func() config.Settings // current merged settings (may change between turns)
	// Project, when set, gives a session on cwd its project: the workspace root that holds cwd
	// (a root of the session besides cwd; "" or cwd for cwd alone) and the session's settings,
	// with that root's project layer in place of any other's. Nil: every session reads Settings.
	Project  func(cwd string) (root string, settings func() config.Settings)
	StateDir string // $XDG_STATE_HOME/agentd (sessions, per-project mode and grants)
	// StateKeyFile holds the key the per-project mode and grants are signed with; it must lie
	// outside StateDir. Empty means <config dir>/state.key.
	StateKeyFile string
	Logger       *zap.Logger
	// NoTitles skips naming sessions after their first exchange: that costs one more model
	// request, which `agentd exec` (one turn, no session list to show) does not need.
	NoTitles bool
	// Prompts is the prompt config every model-facing text is rendered from; nil means the
	// built-in set.
	Prompts *prompts.Set
	// MCP runs the sessions' MCP servers; nil makes a pool of the manager's own.
	MCP *mcp.Pool
	// MCPTokens keeps the MCP servers' OAuth tokens (by issuer and resource) for the pool the
	// manager makes; nil leaves a server's request for authorization a failure.
	MCPTokens NamedSecrets
	// MCPClientIDURL is agentd's OAuth Client ID Metadata Document, "" for none (servers are
	// then registered with dynamically).
	MCPClientIDURL string
	// KeyEnvNames lists the environment variables that may hold a provider key under the
	// settings; no program a tool starts sees them. Nil means an empty providers registry's
	// (the vendors' conventional variables and the providers' apiKeyEnv).
	KeyEnvNames func(config.Settings) []string
	// BooleanConfigOptions says the client takes boolean config options (ACP's
	// clientCapabilities.session.configOptions.boolean): only then does a session offer
	// answer_review, ACP forbidding a boolean option to any other client.
	BooleanConfigOptions bool
}

const (
	// defaultContextWindow is the context window of a model neither the table of model
	// families nor the settings know.
	defaultContextWindow = providers.DefaultContextWindow
	listPageSize         = 100
)

// Manager owns every session of one daemon. Its methods are safe to call concurrently; the rpc
// handlers call them from one goroutine per request.
type Manager struct {
	d        Deps
	log      *zap.Logger
	store    *store
	projects *projects
	trace    *tracer
	// toolModes remembers the servers that refused native tools (session/textmode.go).
	toolModes *toolModes
	mcp       *mcp.Pool
	// system is systemPrompt(d.Tools), built on first use; specs the tools' specs as the model
	// reads them.
	system func() string
	specs  func() []providers.ToolSpec
	// toolList is the TOOLS run value of the system prompt.
	toolList func() []map[string]any
	// variants are the tool sets the settings may offer (session/offered.go); the three above
	// are the current settings' variant's.
	variants variants
	// sem holds the semantic indexes (session/semantic.go).
	sem semantic
	// now is the clock that paces what a turn sends and saves while it streams; tests replace
	// it to count bytes without waiting.
	now func() time.Time
	// afterFunc runs f once d has passed unless stopped (time.AfterFunc); tests replace it to
	// time out a permission request without waiting.
	afterFunc func(d time.Duration, f func()) (stop func())

	mu       sync.Mutex
	sessions map[string]*Session
	shutdown bool

	bgCtx    context.Context
	bgCancel context.CancelFunc
	bg       sync.WaitGroup
}

// NewManager returns a manager. With an empty StateDir nothing is persisted.
func NewManager(d Deps) *Manager {
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.Tools == nil {
		d.Tools = tools.NewRegistry()
	}
	if d.KeyEnvNames == nil {
		d.KeyEnvNames = providers.NewRegistry().KeyEnvNames
	}
	// An MCP server's oauth.clientSecretEnv holds a secret as a key variable does: no program a
	// tool or hook starts, and no stdio server, sees it.
	keyEnv := d.KeyEnvNames
	d.KeyEnvNames = func(s config.Settings) []string {
		return append(slices.Clip(keyEnv(s)), mcp.SecretEnvNames(s.MCPServers)...) // never into keyEnv's array
	}
	m := &Manager{d: d, log: d.Logger, sessions: map[string]*Session{}, now: time.Now, afterFunc: afterFunc}
	if d.StateDir != "" {
		m.store = &store{dir: filepath.Join(d.StateDir, "sessions"), log: d.Logger, texts: m.texts}
	}
	if d.StateKeyFile == "" {
		d.StateKeyFile = filepath.Join(config.ConfigDir(), "state.key")
	}
	m.projects = newProjects(d.StateDir, d.StateKeyFile, d.Logger)
	m.projects.notify = m.noticeProject
	m.toolModes = newToolModes(d.StateDir, m.projects.key, d.Logger)
	if m.mcp = d.MCP; m.mcp == nil {
		m.mcp = mcp.NewPool(d.Logger)
		m.mcp.HideEnv = func() []string { return d.KeyEnvNames(m.settings()) }
		if d.MCPTokens != nil {
			m.mcp.OAuth = &mcpauth.Flow{Store: d.MCPTokens, ClientIDURL: d.MCPClientIDURL, Log: d.Logger.Named("mcpauth")}
		}
	}
	m.trace = &tracer{}
	m.system = func() string { return m.variant(m.settings()).system() }
	m.toolList = func() []map[string]any { return m.variant(m.settings()).toolList() }
	m.specs = func() []providers.ToolSpec { return m.variant(m.settings()).specs() }
	if path := m.settings().Trace; path != "" {
		if err := m.SetTrace(path); err != nil {
			m.log.Warn("agent trace: " + err.Error())
		}
	}
	m.bgCtx, m.bgCancel = context.WithCancel(context.Background())
	return m
}

// noticeProject warns the live sessions of project path (their cwd) that its state was refused.
func (m *Manager) noticeProject(path, msg string) {
	m.mu.Lock()
	var to []*Session
	for _, s := range m.sessions {
		if s.roots.Cwd() == path {
			to = append(to, s)
		}
	}
	m.mu.Unlock()
	for _, s := range to {
		s.notice(protocol.SeverityWarning, "Remembered permissions not applied", msg)
	}
}

// settings returns the current settings with the loop's defaults filled in where the Settings
// function leaves them unset (tests and embedders pass partial settings): the defaults are
// config.Defaults(), their one home.
func (m *Manager) settings() config.Settings {
	var s config.Settings
	if m.d.Settings != nil {
		s = m.d.Settings()
	}
	return withLoopDefaults(s)
}

// settings are the session's own: the user's layers with the project layer of the session's
// workspace root (Deps.Project), never another session's.
func (s *Session) settings() config.Settings {
	if s.set == nil {
		return s.m.settings()
	}
	return withLoopDefaults(s.set())
}

// providerCtx is ctx for resolving the session's provider: with the session's own settings
// (config.WithSettings) when it has any, so its project's provider and model apply to it alone.
func (s *Session) providerCtx(ctx context.Context, set config.Settings) context.Context {
	if s.set == nil {
		return ctx
	}
	return config.WithSettings(ctx, set)
}

// withLoopDefaults fills in the loop's defaults where s leaves them unset.
func withLoopDefaults(s config.Settings) config.Settings {
	d := loopDefaults()
	if s.MaxIterations <= 0 {
		s.MaxIterations = d.MaxIterations
	}
	if s.MaxTokens <= 0 {
		s.MaxTokens = d.MaxTokens
	}
	if s.Mode == "" {
		s.Mode = d.Mode
	}
	if s.Subagents.MaxConcurrent <= 0 {
		s.Subagents.MaxConcurrent = d.Subagents.MaxConcurrent
	}
	if s.Subagents.MaxIterations <= 0 {
		s.Subagents.MaxIterations = d.Subagents.MaxIterations
	}
	if s.Subagents.MaxTokens <= 0 {
		s.Subagents.MaxTokens = d.Subagents.MaxTokens
	}
	if s.CompactThreshold <= 0 || s.CompactThreshold >= 1 {
		s.CompactThreshold = d.CompactThreshold
	}
	return s
}

func afterFunc(d time.Duration, f func()) func() {
	t := time.AfterFunc(d, f)
	return func() { t.Stop() }
}

// loopDefaults is config.Defaults(), built once.
var loopDefaults = sync.OnceValue(config.Defaults)

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func unknown(id string) error { return fmt.Errorf("%w: %q", ErrUnknownSession, id) }

// New starts a session on cwd.
func (m *Manager) New(ctx context.Context, p protocol.SessionNewParams) (protocol.SessionNewResult, error) {
	if err := checkNew(&p); err != nil {
		return protocol.SessionNewResult{}, err
	}
	roots, set, err := m.sessionRoots(p.Cwd, p.AdditionalDirectories)
	if err != nil {
		return protocol.SessionNewResult{}, &ParamError{Field: "cwd", Message: err.Error()}
	}
	id := newID("sess_")
	s := m.newSession(id, roots, p.Cwd, p.AdditionalDirectories)
	s.set = set
	s.mode = m.projects.mode(roots.Cwd(), s.settings().Mode)
	// _meta["agentd/mode"] starts the session in a mode without persisting it for the project
	// (agentd exec --mode).
	if v, ok := p.Meta["agentd/mode"].(string); ok {
		s.mode = v
	}
	if s.file, err = m.store.create(id, header{ID: id, Cwd: p.Cwd, Dirs: p.AdditionalDirectories, Created: time.Now().UTC()}); err != nil {
		return protocol.SessionNewResult{}, fmt.Errorf("session store: %w", err)
	}
	if err := m.add(s); err != nil {
		s.file.close()
		return protocol.SessionNewResult{}, err
	}
	// The client learns the session id from the answer, so the commands (and the notices of MCP
	// servers, which start now, in the background) go out after it.
	answered := make(chan struct{})
	s.startMCP(p.MCPServers, answered)
	s.refreshInstructions()
	loaded := s.instructionsMeta()
	refused := s.instructionsRefused()
	skillProblems := s.skillProblems()
	agentProblems := s.agentProblems()
	s.startSessionHooks(answered)
	AfterAnswer(ctx, func() {
		s.refreshIndexes(s.settings(), 0, true)
		s.announceCommands()
		s.noticeInstructions(loaded)
		s.noticeRefusedInstructions(refused)
		s.noticeSkills(skillProblems)
		s.noticeAgents(agentProblems)
		if n := s.settings().ProjectNotice; n != "" {
			s.notice(protocol.SeverityWarning, "Project settings ignored", n)
		}
		if n := m.projects.refusal(roots.Cwd()); n != "" {
			s.notice(protocol.SeverityWarning, "Remembered permissions not applied", n)
		}
		close(answered)
	})
	return protocol.SessionNewResult{SessionID: id, ConfigOptions: s.configOptions(), Modes: s.modes(), Meta: map[string]any{"agentd/instructions": loaded}}, nil
}

// sessionRoots are the roots of a session on cwd: cwd, the workspace root that holds it
// (Deps.Project) and dirs; and the session's settings (nil: the manager's).
func (m *Manager) sessionRoots(cwd string, dirs []string) (*workspace.Roots, func() config.Settings, error) {
	if m.d.Project == nil || !filepath.IsAbs(cwd) {
		roots, err := workspace.NewRoots(cwd, dirs...)
		return roots, nil, err
	}
	root, set := m.d.Project(cwd)
	if root != "" && root != cwd {
		dirs = append([]string{root}, dirs...)
	}
	roots, err := workspace.NewRoots(cwd, dirs...)
	return roots, set, err
}

func (m *Manager) newSession(id string, roots *workspace.Roots, cwd string, dirs []string) *Session {
	s := &Session{m: m, id: id, cwd: cwd, dirs: dirs, roots: roots, updatedAt: time.Now().UTC(), pending: map[*pendingPerm]struct{}{}}
	if m.d.Workspaces != nil {
		s.ws = m.d.Workspaces(id, roots)
	}
	s.msgSeq = newID("")[:6]
	return s
}

func (m *Manager) add(s *Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shutdown {
		return errors.New("the daemon is shutting down")
	}
	m.sessions[s.id] = s
	return nil
}

func (m *Manager) get(id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return nil, unknown(id)
	}
	return s, nil
}

// Load reopens a stored session and replays its transcript through Client.Update before it
// returns.
func (m *Manager) Load(ctx context.Context, p protocol.SessionLoadParams) (protocol.SessionLoadResult, error) {
	return m.open(ctx, p, true)
}

// Resume reopens a stored session without replaying it.
func (m *Manager) Resume(ctx context.Context, p protocol.SessionLoadParams) (protocol.SessionLoadResult, error) {
	return m.open(ctx, p, false)
}

func (m *Manager) open(ctx context.Context, p protocol.SessionLoadParams, replay bool) (protocol.SessionLoadResult, error) {
	if err := checkLoad(&p); err != nil {
		return protocol.SessionLoadResult{}, err
	}
	m.mu.Lock()
	s, live := m.sessions[p.SessionID]
	m.mu.Unlock()
	if m.store == nil && !live {
		return protocol.SessionLoadResult{}, unknown(p.SessionID)
	}
	var st *loaded
	if m.store != nil {
		var err error
		st, err = m.store.load(p.SessionID, replay)
		if errors.Is(err, os.ErrNotExist) {
			if !live {
				return protocol.SessionLoadResult{}, unknown(p.SessionID)
			}
		} else if err != nil {
			return protocol.SessionLoadResult{}, fmt.Errorf("session store: %w", err)
		}
	}
	if !live {
		cwd := p.Cwd
		roots, set, err := m.sessionRoots(cwd, st.header.Dirs)
		if err != nil {
			return protocol.SessionLoadResult{}, &ParamError{Field: "cwd", Message: err.Error()}
		}
		s = m.newSession(p.SessionID, roots, cwd, st.header.Dirs)
		s.set = set
		s.history = st.history
		s.title = st.title
		s.titled = st.title != "" || len(st.history) > 0
		s.providerID = st.provider
		s.thought = st.thought
		s.review = st.review
		s.mode = m.projects.mode(roots.Cwd(), s.settings().Mode)
		if st.mode != "" {
			s.mode = st.mode
		}
		if !st.updated.IsZero() {
			s.updatedAt = st.updated
		}
		s.usage, s.cost = st.usage, st.cost
		s.loadCheckpoints(st.rewinds)
		if s.file, err = m.store.append(p.SessionID); err != nil {
			return protocol.SessionLoadResult{}, fmt.Errorf("session store: %w", err)
		}
		if err := m.add(s); err != nil {
			s.file.close()
			return protocol.SessionLoadResult{}, err
		}
	}
	if replay && st != nil {
		if st.dropped > 0 {
			m.log.Warn("session load: update records not replayed (too long, or naming a JSON-RPC envelope key or another session)",
				zap.String("session", p.SessionID), zap.Int("records", st.dropped))
		}
		su, stored := m.d.Client.(storedUpdater)
		for _, e := range st.replay {
			if ctx.Err() != nil {
				break
			}
			if e.raw != nil && stored {
				su.UpdateStored(s.id, e.kind, e.raw)
				continue
			}
			u, ok := decodeStored(e)
			if !ok {
				continue
			}
			if u.MessageID == "" && u.Content != nil {
				// Transcripts written before user chunks carried one.
				u.MessageID = s.nextMessageID()
			}
			m.d.Client.Update(s.id, u)
		}
		if s.title != "" {
			m.d.Client.Update(s.id, protocol.SessionUpdate{SessionUpdate: protocol.UpdateSessionInfoUpdate, SessionTitle: s.title, UpdatedAt: s.updatedAt.Format(time.RFC3339)})
		}
	}
	// The context meter and the session's cost as they stood, on load and on resume alike.
	s.mu.Lock()
	usage := s.usage
	s.mu.Unlock()
	if usage != nil && ctx.Err() == nil {
		m.d.Client.Update(s.id, *usage)
	}
	s.announceCommands()
	answered := make(chan struct{})
	close(answered)
	s.startMCP(p.MCPServers, answered)
	return protocol.SessionLoadResult{ConfigOptions: s.configOptions(), Modes: s.modes()}, nil
}

// List returns stored sessions (and live ones), newest first, optionally only those of cwd.
func (m *Manager) List(ctx context.Context, p protocol.SessionListParams) (protocol.SessionListResult, error) {
	if err := checkList(&p); err != nil {
		return protocol.SessionListResult{}, err
	}
	byID := map[string]protocol.SessionInfo{}
	if m.store != nil {
		infos, err := m.store.list()
		if err != nil {
			return protocol.SessionListResult{}, fmt.Errorf("session store: %w", err)
		}
		for _, in := range infos {
			byID[in.SessionID] = in
		}
	}
	m.mu.Lock()
	for _, s := range m.sessions {
		byID[s.id] = s.info()
	}
	m.mu.Unlock()
	all := make([]protocol.SessionInfo, 0, len(byID))
	for _, in := range byID {
		if p.Cwd != "" && filepath.Clean(in.Cwd) != filepath.Clean(p.Cwd) {
			continue
		}
		all = append(all, in)
	}
	sort.Slice(all, func(i, j int) bool {
		ti, _ := time.Parse(time.RFC3339Nano, all[i].UpdatedAt)
		tj, _ := time.Parse(time.RFC3339Nano, all[j].UpdatedAt)
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return all[i].SessionID < all[j].SessionID
	})
	start := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil || n < 0 {
			return protocol.SessionListResult{}, &ParamError{Field: "cursor", Message: "is not a cursor this server returned"}
		}
		start = min(n, len(all))
	}
	end := min(start+listPageSize, len(all))
	res := protocol.SessionListResult{Sessions: all[start:end]}
	if end < len(all) {
		res.NextCursor = strconv.Itoa(end)
	}
	return res, nil
}

// Close cancels the session's turn and frees it; its transcript stays stored.
func (m *Manager) Close(ctx context.Context, sessionID string) error {
	if err := checkRequired("sessionId", sessionID); err != nil {
		return err
	}
	m.mu.Lock()
	s, ok := m.sessions[sessionID]
	delete(m.sessions, sessionID)
	m.mu.Unlock()
	if !ok {
		return unknown(sessionID)
	}
	s.close(ctx)
	return nil
}

// Delete closes the session if it is open and removes its transcript.
func (m *Manager) Delete(ctx context.Context, sessionID string) error {
	if err := checkRequired("sessionId", sessionID); err != nil {
		return err
	}
	m.mu.Lock()
	s, ok := m.sessions[sessionID]
	delete(m.sessions, sessionID)
	m.mu.Unlock()
	if ok {
		s.close(ctx)
	}
	removed := false
	if m.store != nil {
		if validID(sessionID) {
			_ = os.RemoveAll(filepath.Join(m.store.dir, sessionID+".checkpoints"))
		}
		err := m.store.remove(sessionID)
		if err == nil {
			removed = true
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("session store: %w", err)
		}
	}
	if !ok && !removed {
		return unknown(sessionID)
	}
	return nil
}

// Prompt runs one turn (after the turns queued before it) and answers when it ends. A cancelled
// ctx is the same as Cancel: the result still comes, with stopReason "cancelled".
func (m *Manager) Prompt(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
	if err := checkPrompt(&p); err != nil {
		return protocol.PromptResult{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return protocol.PromptResult{}, err
	}
	if err := s.checkImages(p.Prompt); err != nil {
		return protocol.PromptResult{}, err
	}
	return s.prompt(ctx, p.Prompt), nil
}

// Cancel ends the session's running turn and answers its queued prompts with "cancelled".
// Unknown sessions and idle sessions are ignored (a notification has no answer).
func (m *Manager) Cancel(sessionID string) {
	s, err := m.get(sessionID)
	if err != nil {
		return
	}
	s.cancel()
}

// SetConfigOption changes the session's mode or model; the change applies from the next tool
// call (mode) or model call (model).
func (m *Manager) SetConfigOption(ctx context.Context, p protocol.SetConfigOptionParams) (protocol.SetConfigOptionResult, error) {
	if err := checkSetConfig(&p); err != nil {
		return protocol.SetConfigOptionResult{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return protocol.SetConfigOptionResult{}, err
	}
	if p.Type == protocol.ConfigBoolean && p.ConfigID != "answer_review" {
		return protocol.SetConfigOptionResult{}, &ParamError{Field: "type", Message: fmt.Sprintf(
			"config option %q is not a boolean: send one of its value ids", p.ConfigID)}
	}
	switch p.ConfigID {
	case "answer_review":
		if !m.d.BooleanConfigOptions {
			return protocol.SetConfigOptionResult{}, &ParamError{Field: "configId", Message: "answer_review is a boolean option, offered only to a client that takes boolean config options"}
		}
		if p.Type != protocol.ConfigBoolean || (p.Value != "true" && p.Value != "false") {
			return protocol.SetConfigOptionResult{}, &ParamError{Field: "value", Message: "answer_review is a boolean: send {type: \"boolean\", value: true | false}"}
		}
		on := p.Value == "true"
		s.mu.Lock()
		s.review = &on
		s.mu.Unlock()
		s.record(record{T: recConfig, Review: &on})
	case "mode":
		if err := checkMode("value", p.Value); err != nil {
			return protocol.SetConfigOptionResult{}, err
		}
		s.setMode(p.Value, false)
	case "model":
		if _, ok := s.settings().Providers[p.Value]; !ok {
			return protocol.SetConfigOptionResult{}, &ParamError{Field: "value", Message: fmt.Sprintf("no provider %q is configured", p.Value)}
		}
		s.mu.Lock()
		s.providerID = p.Value
		s.mu.Unlock()
		s.record(record{T: recConfig, Provider: p.Value})
	case "thought_level":
		if !s.settings().Thinking.Enabled {
			return protocol.SetConfigOptionResult{}, &ParamError{Field: "configId", Message: "thinking is disabled in the settings, so there is no thought_level"}
		}
		if set := s.settings(); !s.modelThinks(set) {
			_, ps := s.model(set)
			return protocol.SetConfigOptionResult{}, &ParamError{Field: "configId", Message: fmt.Sprintf("the model %q does not reason visibly, so there is no thought_level (if it does, say so in its provider's capabilities setting)", ps.Model)}
		}
		switch p.Value {
		case "off", "low", "medium", "high":
		default:
			return protocol.SetConfigOptionResult{}, &ParamError{Field: "value", Message: fmt.Sprintf("thought_level %q is not one of off, low, medium, high", p.Value)}
		}
		s.mu.Lock()
		s.thought = p.Value
		s.mu.Unlock()
		s.record(record{T: recConfig, Thought: p.Value})
	default:
		return protocol.SetConfigOptionResult{}, &ParamError{Field: "configId", Message: fmt.Sprintf("unknown config option %q (known: %s)", p.ConfigID, strings.Join(s.configIDs(), ", "))}
	}
	return protocol.SetConfigOptionResult{ConfigOptions: s.configOptions()}, nil
}

// Shutdown cancels every turn, waits for them to answer and flushes the stores.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.shutdown = true
	all := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		all = append(all, s)
	}
	m.sessions = map[string]*Session{}
	m.mu.Unlock()
	m.bgCancel()
	for _, s := range all {
		s.stop()
	}
	for _, s := range all {
		s.wait(ctx)
		s.backgroundPrograms().Close()
	}
	done := make(chan struct{})
	go func() { m.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	m.mcp.Close()
	m.trace.close()
	return nil
}
