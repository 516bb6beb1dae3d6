package session

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// Permission modes, as strings for the wire and the settings; config names them.
const (
	ModeAsk  = config.ModeAsk
	ModeAuto = config.ModeAuto
	ModePlan = config.ModePlan
)

// Session is one conversation: its roots, history, mode and grants, and the one turn that may
// run at a time plus the prompts queued behind it.
type Session struct {
	m *Manager
	// set returns the session's settings (Deps.Project); nil means the manager's.
	set   func() config.Settings
	id    string
	cwd   string
	dirs  []string
	roots *workspace.Roots
	ws    workspace.Workspace
	file  *sessionFile

	// noElide sends the history whole (the compaction benchmark's baseline).
	noElide bool
	// sandboxNoticed: the session said once that programs cannot be sandboxed here.
	sandboxNoticed atomic.Bool
	// programs are the session's background programs, stopped when it closes.
	programs *tools.Programs
	// elided is the history as last sent, older tool results elided (compact.go).
	elided elideCache
	// histGen counts the changes of history other than appends and the ones elideCache finds
	// itself (compact.go), guarded by mu.
	histGen uint64
	// editorTimeouts counts the editor_state requests in a row that timed out (editorctx.go).
	editorTimeouts atomic.Int32
	// contextNotes are where the live context was put in the history (texts.go), guarded by mu.
	contextNotes []contextNote
	// instr are the project instructions in the system prompt (instructions.go), guarded by mu.
	instr *instructions
	// startHooks delivers the sessionStart hooks' context to the first prompt (hooks.go),
	// guarded by mu.
	startHooks chan string
	startWait  time.Duration

	msgSeq string
	msgN   atomic.Int64

	mu         sync.Mutex
	history    []providers.Message
	title      string
	titled     bool
	updatedAt  time.Time
	mode       string
	providerID string
	thought    string // thought_level: off | low | medium | high; "" is medium
	lastUsed   int    // context tokens after the last model call, for automatic compaction
	// review is the user's answer_review for this session (nil: settings answerReview).
	review *bool
	// usage is the last usage_update sent, shown again on load and resume; cost is the
	// session's cumulative cost (nil while no model call of the session had a known price).
	usage  *protocol.SessionUpdate
	cost   *protocol.Cost
	grants []grant // session-scope grants
	// edited holds the files this session's edits changed that may still be unsaved in the
	// editor; they are saved before a program runs (saveBeforeRun, saves.go).
	edited     map[string]*editedFile
	running    bool
	turnCancel context.CancelFunc
	turnDone   chan struct{}
	queue      []*ticket
	// steers are steering messages for the running turn, taken at its next step boundary
	// (steer.go).
	steers [][]protocol.ContentBlock
	// cancelPending records a cancel that arrived between a turn's start and the registration
	// of its cancel function.
	cancelPending bool
	// ending is set from a turn's end until the next queued prompt starts (after the ended
	// turn's answer is on the wire): a cancel then has no turn to end.
	ending  bool
	pending map[*pendingPerm]struct{}
	closed  bool
	// checkpoints are the newest turns' checkpoints, oldest first (checkpoints.go).
	checkpoints []*checkpoint
	// restore is what restores and the next turn's notes need (restore.go); its own lock.
	restore restoreState
	// mcp is the session's MCP servers (session/mcp.go); nil when it names none.
	mcp *mcp.Set
	// moduleList are the build manifests found at modulesAt (editorctx.go).
	moduleList []workspace.Module
	modulesAt  time.Time
	// modulesBusy is set while a look for modules runs in the background; modulesDone is
	// closed when the newest such look ends.
	modulesBusy bool
	modulesDone chan struct{}
	// commands are the session's command files as last read (commands.go), guarded by mu.
	commands *commandFiles

	// A subagent's child conversation is a Session of its own history whose parent is the
	// session it runs for (subagents.go): parentCall is the agent call it answers, childSystem
	// its system text. Its mode, grants, cost and edits are its parent's, and what it shows goes
	// out on the parent's id.
	parent      *Session
	parentCall  string
	childSystem string
	// agentSem bounds the children running at once (subagents.maxConcurrent), made at the first.
	agentSem chan struct{}
}

// ticket is a prompt waiting in the queue. ready is closed when it may start, or when it was
// cancelled (cancelled set first).
type ticket struct {
	ready     chan struct{}
	cancelled bool
	// announce: the prompt waited behind a running turn, so it is announced with a
	// user_message_chunk when it starts. A prompt sent after the last turn's answer is not.
	announce bool
}

func (s *Session) nextMessageID() string {
	return "msg_" + s.msgSeq + "_" + strconv.FormatInt(s.msgN.Add(1), 10)
}

func (s *Session) update(u protocol.SessionUpdate) {
	if s.parent != nil {
		var ok bool
		if u, ok = s.forParent(u); !ok {
			return
		}
	}
	if s.m.d.Client != nil {
		s.m.d.Client.Update(s.id, u)
	}
}

// top is the session a subagent runs for, or s itself.
func (s *Session) top() *Session {
	for s.parent != nil {
		s = s.parent
	}
	return s
}

func (s *Session) notice(severity, title, desc string) {
	s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateNotice, Severity: severity, NoticeTitle: title, Description: desc})
}

// record appends events to the session's transcript, in one write: each is in the file when
// record returns, so the turn never goes on past a record a kill -9 could lose.
func (s *Session) record(rs ...record) {
	if s.file == nil {
		return
	}
	if s.parent != nil {
		rs = s.childRecords(rs)
	}
	if err := s.file.write(rs...); err != nil {
		s.m.log.Warn("session store write failed")
	}
}

// prompt queues the prompt behind the running turn, runs it and answers with its result.
func (s *Session) prompt(ctx context.Context, blocks []protocol.ContentBlock) protocol.PromptResult {
	t := &ticket{ready: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return protocol.PromptResult{StopReason: protocol.StopCancelled}
	}
	queued := s.running
	if queued {
		t.announce = !s.ending
		s.queue = append(s.queue, t)
	} else {
		s.running = true
	}
	s.mu.Unlock()

	if queued {
		select {
		case <-t.ready:
		case <-ctx.Done():
			s.cancel()
			<-t.ready
		}
		s.mu.Lock()
		cancelled := t.cancelled
		s.mu.Unlock()
		if cancelled {
			return protocol.PromptResult{StopReason: protocol.StopCancelled, Usage: &protocol.Usage{}}
		}
	}

	turnCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	s.mu.Lock()
	s.turnCancel = cancel
	s.turnDone = done
	if s.cancelPending {
		s.cancelPending = false
		cancel()
	}
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, s.cancel)

	res := s.runTurn(turnCtx, blocks, t.announce)

	stop()
	cancel()
	s.mu.Lock()
	s.turnCancel = nil
	s.turnDone = nil
	s.cancelPending = false
	s.ending = true
	s.steers = nil // too late for this turn, which has ended (or was cancelled)
	close(done)
	s.mu.Unlock()
	// The next queued prompt starts once this one's answer is on the wire: a turn's updates
	// never precede the answer of the turn before it, so a client sees one turn at a time.
	AfterAnswer(ctx, s.startNext)
	return res
}

// startNext lets the first queued prompt start, or leaves the session idle. A cancel that came
// after the turn ended has already emptied the queue, so nothing starts and no cancel is left
// pending for a later prompt.
func (s *Session) startNext() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ending = false
	if len(s.queue) > 0 && !s.closed {
		next := s.queue[0]
		s.queue = s.queue[1:]
		close(next.ready)
		return
	}
	s.running = false
	s.cancelPending = false
}

// cancel ends the running turn and answers every queued prompt with "cancelled"; nothing starts
// by itself afterwards.
func (s *Session) cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turnCancel != nil {
		s.turnCancel()
	} else if s.running && !s.ending {
		s.cancelPending = true
	}
	for _, t := range s.queue {
		t.cancelled = true
		close(t.ready)
	}
	s.queue = nil
}

// close cancels everything, waits (bounded by ctx) for the turn to answer and closes the store.
func (s *Session) close(ctx context.Context) {
	s.stop()
	s.wait(ctx)
	s.backgroundPrograms().Close()
}

// stop marks the session closed and cancels its turn and queue.
func (s *Session) stop() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
}

// wait waits (bounded by ctx) for a cancelled turn to answer, then flushes and closes the store.
func (s *Session) wait(ctx context.Context) {
	s.mu.Lock()
	done := s.turnDone
	s.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
	s.file.close()
	s.closeMCP()
}

func (s *Session) currentMode() string {
	if s.parent != nil {
		return s.parent.currentMode() // never looser than the parent's, now
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// setMode switches the permission mode, persists it for the project and tells the client.
func (s *Session) setMode(mode string, announce bool) {
	s.mu.Lock()
	changed := s.mode != mode
	s.mode = mode
	s.mu.Unlock()
	s.m.projects.setMode(s.roots.Cwd(), mode)
	s.record(record{T: recConfig, Mode: mode})
	if changed || announce {
		s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateCurrentModeUpdate, CurrentModeID: mode})
		s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateConfigOptionUpdate, ConfigOptions: s.configOptions()})
	}
}

var modeValues = []protocol.ConfigOptionValue{
	{Value: ModeAsk, Name: "Ask", Description: "Ask before every edit and program run"},
	{Value: ModeAuto, Name: "Auto", Description: "Apply edits and run programs without asking"},
	{Value: ModePlan, Name: "Plan", Description: "Read only: propose changes as text"},
}

func (s *Session) modes() *protocol.SessionModes {
	out := &protocol.SessionModes{CurrentModeID: s.currentMode()}
	for _, v := range modeValues {
		out.AvailableModes = append(out.AvailableModes, protocol.SessionMode{ID: v.Value, Name: v.Name, Description: v.Description})
	}
	return out
}

func (s *Session) configOptions() []protocol.ConfigOption {
	set := s.settings()
	s.mu.Lock()
	mode, prov := s.mode, s.providerID
	s.mu.Unlock()
	if prov == "" {
		prov = set.Provider
	}
	ids := make([]string, 0, len(set.Providers))
	for id := range set.Providers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if prov != "" && !slices.Contains(ids, prov) {
		ids = append([]string{prov}, ids...)
	}
	// Sized once: growing by appends allocated in four size classes, each a fresh span (and a
	// page or two of heap) the first time, in an idle daemon's session/new.
	models := make([]protocol.ConfigOptionValue, 0, len(ids))
	for _, id := range ids {
		name := id
		if ps, ok := set.Providers[id]; ok && ps.Model != "" {
			name = fmt.Sprintf("%s (%s)", ps.Model, id)
		}
		models = append(models, protocol.ConfigOptionValue{Value: id, Name: name})
	}
	opts := []protocol.ConfigOption{
		{ID: "mode", Name: "Mode", Category: "mode", Type: "select", CurrentValue: mode, Options: modeValues},
		{ID: "model", Name: "Model", Category: "model", Type: "select", CurrentValue: prov, Options: models, Meta: s.promptCapabilitiesMeta(set)},
	}
	if set.Thinking.Enabled && s.modelThinks(set) {
		s.mu.Lock()
		level := s.thought
		s.mu.Unlock()
		if level == "" {
			level = "medium"
		}
		opts = append(opts, protocol.ConfigOption{ID: "thought_level", Name: "Thinking", Category: "thought_level", Type: "select", CurrentValue: level, Options: thoughtValues})
	}
	if s.m.d.BooleanConfigOptions {
		opts = append(opts, protocol.ConfigOption{ID: "answer_review", Name: "Review answers", Category: "model_config", Type: protocol.ConfigBoolean,
			Description:  "Send an answer that holds code to the model once more, with what its tools found, before you read it (one more model request)",
			CurrentValue: strconv.FormatBool(s.reviewing(set))})
	}
	return opts
}

// configIDs are the ids of the session's config options, for an error naming them.
func (s *Session) configIDs() []string {
	var ids []string
	for _, o := range s.configOptions() {
		ids = append(ids, o.ID)
	}
	return ids
}

// reviewing says whether the session's turns review their answers: the user's answer_review
// for it, else settings answerReview.
func (s *Session) reviewing(set config.Settings) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.review != nil {
		return *s.review
	}
	return set.AnswerReview
}

var thoughtValues = []protocol.ConfigOptionValue{
	{Value: "off", Name: "Off", Description: "No visible reasoning"},
	{Value: "low", Name: "Low", Description: "A short reasoning budget"},
	{Value: "medium", Name: "Medium", Description: "The configured or the provider's default budget"},
	{Value: "high", Name: "High", Description: "A large reasoning budget"},
}

// modelThinks reports whether the session's model reasons visibly (its capabilities: the built-in
// table, then the provider's settings). A model that does not is never asked to (turn.go), so it
// is offered no thought_level either.
func (s *Session) modelThinks(set config.Settings) bool {
	_, ps := s.model(set)
	return providers.CapabilitiesOf(ps).Thinking
}

// thinking is the request's reasoning setting for the session's thought level.
func (s *Session) thinking(set config.Settings) providers.Thinking {
	if !set.Thinking.Enabled {
		return providers.Thinking{}
	}
	s.mu.Lock()
	level := s.thought
	s.mu.Unlock()
	th := providers.Thinking{Enabled: true}
	if set.Thinking.BudgetTokens != nil {
		th.BudgetTokens = *set.Thinking.BudgetTokens
	}
	switch level {
	case "off":
		return providers.Thinking{}
	case "low":
		th.BudgetTokens = 2048
	case "high":
		th.BudgetTokens = 16384
	}
	return th
}

func (s *Session) info() protocol.SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return protocol.SessionInfo{SessionID: s.id, Cwd: s.cwd, Title: s.title, UpdatedAt: s.updatedAt.Format(time.RFC3339Nano)}
}
