package session

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/session/internal/texttools"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// turn is one prompt's run: model calls and tool calls until the model stops, the iteration
// bound is hit, or the turn is cancelled.
type turn struct {
	s *Session
	// foundGen is the MCP set's find_tools count the turn's tools reflect (refreshTools).
	foundGen int
	// editor holds the run values of the editor's state, asked once per turn (editorctx.go).
	editor prompts.Run
	ctx    context.Context
	set    config.Settings
	prov   providers.Provider
	pcfg   providers.Config
	window int
	usage  protocol.Usage
	used   int // context tokens after the last model call
	live   string
	// caps is what the turn's model can do; mode how it calls tools (config.ToolCalling*: the
	// text protocol is session/textmode.go); textSys the text protocol's system prompt once built.
	caps    providers.Capabilities
	mode    string
	textSys string
	// envSchema is the output constraint of envReg's tools (textmode.go), rebuilt when the
	// turn's tool set changes.
	envSchema json.RawMessage
	envReg    *tools.Registry
	// overflowed is set once a context_overflow made the turn compact and retry.
	overflowed bool
	// stopHooked is set once the stop hooks ran in this turn (session/hooks.go).
	stopHooked bool
	// switchAsked is set once the user declined to leave plan mode in this turn, so the
	// question is not repeated for every call.
	switchAsked bool
	// planIndex is the index, within the response whose calls run, of the call whose plan was
	// sent last (sendPlan).
	planMu    sync.Mutex
	planIndex int
	// nudges are the loop's one-shot messages the turn has sent (session/nudge.go).
	nudges nudges
	// reg is the turn's tool set, one snapshot from its start to its end (session/mcp.go).
	reg *tools.Registry
	// changes are the files the turn's tools changed (session/changes.go).
	changes *turnChanges
	// cp is the turn's checkpoint (session/checkpoints.go).
	cp *checkpoint
	// log is the checkpoint's file while the turn runs; blobs numbers the pre-images written to
	// it, by the path they were read at.
	cpMu      sync.Mutex
	cpEnded   bool
	cpFinal   bool // the turn's last save, which writes the post-images
	cpWritten bool // the log file was created
	log       *os.File
	blobs     map[string]int
	// budget, when positive, is the tokens a subagent's turn may use in all; overBudget is set
	// once it stopped there (subagents.go).
	budget     int
	overBudget bool
	// subMu guards the children's usage added to usage while they run, and agents, the
	// subagents this turn started.
	subMu  sync.Mutex
	agents int
}

// workspace is the port the turn's tools write through: the session's, recording the changes.
func (t *turn) workspace() workspace.Workspace {
	if t.s.ws == nil {
		return nil
	}
	if t.changes == nil {
		t.changes = newTurnChanges()
	}
	return recordingWS{Workspace: t.s.ws, tc: t.changes}
}

func (s *Session) runTurn(ctx context.Context, blocks []protocol.ContentBlock, announce bool) protocol.PromptResult {
	t := &turn{s: s, ctx: ctx, set: s.settings(), reg: s.toolset(ctx), changes: newTurnChanges()}
	t.set.AnswerReview = s.reviewing(t.set)
	s.mu.Lock()
	t.used = s.lastUsed
	s.mu.Unlock()
	res := t.run(blocks, announce)
	t.endCheckpoint()
	res.Usage = &t.usage
	s.mu.Lock()
	s.updatedAt = time.Now().UTC()
	first := !s.titled && res.StopReason != protocol.StopCancelled && res.Meta == nil
	if first {
		s.titled = true
	}
	s.mu.Unlock()
	if ch := wireChanges(t.changes.list()); len(ch) > 0 {
		if res.Meta == nil {
			res.Meta = protocol.Meta{}
		}
		res.Meta[protocol.MetaChanges] = ch
	}
	if first && t.prov != nil && !s.m.d.NoTitles {
		s.makeTitle(t.prov, t.pcfg)
	}
	s.m.trace.event(s.id, "turn_end", map[string]any{"stopReason": res.StopReason})
	s.announceChangedCommands()
	return res
}

func (t *turn) cancelled() protocol.PromptResult {
	return protocol.PromptResult{StopReason: protocol.StopCancelled}
}

func (t *turn) run(blocks []protocol.ContentBlock, announce bool) protocol.PromptResult {
	s := t.s
	if isCommand(blocks, "/compact") {
		return t.compactCommand()
	}
	if isCommand(blocks, "/undo") {
		return t.undoCommand(blocks, announce)
	}
	typed := blocks
	blocks = t.expandCommand(blocks)
	blocks, blocked := t.promptSubmitHooks(blocks)
	if blocked {
		return protocol.PromptResult{StopReason: protocol.StopEndTurn}
	}
	t.nudges.start = len(s.historySnapshot())
	t.startCheckpoint(typed, t.nudges.start)
	t.addUserMessageShown(typed, blocks, announce)
	s.m.trace.event(s.id, "prompt", map[string]any{"blocks": len(blocks)})

	s.mu.Lock()
	pid := s.providerID
	s.mu.Unlock()
	prov, pcfg, err := s.m.d.Providers.Provider(s.providerCtx(t.ctx, t.set), pid)
	if err != nil {
		return t.fail(err)
	}
	t.prov, t.pcfg = prov, pcfg
	t.caps = capabilitiesOf(t.set, pcfg)
	t.window = t.caps.ContextWindow
	t.mode = s.m.toolMode(t.set, pcfg, t.caps)
	t.live = t.liveContext()
	return t.loop()
}

// loop asks the model and runs its calls until the stopping rule (whatNext) ends the turn, the
// iteration bound or a subagent's token budget is reached, or the turn is cancelled.
func (t *turn) loop() protocol.PromptResult {
	for range t.set.MaxIterations {
		if t.ctx.Err() != nil {
			return t.cancelled()
		}
		if t.budget > 0 && t.tokensUsed() >= t.budget {
			t.overBudget = true
			return protocol.PromptResult{StopReason: protocol.StopMaxTurnRequests}
		}
		t.maybeAutoCompact()
		st := t.stream(t.request())
		if st.err != nil && st.err.ToolsRefused && t.mode == config.ToolCallingNative && t.ctx.Err() == nil {
			// The server takes no tools declaration: go on with the text protocol.
			t.fallBackToText()
			st = t.stream(t.request())
		}
		switch n := t.afterStep(st); {
		case n.again:
			continue
		case n.fail:
			return t.fail(st.err)
		default:
			return protocol.PromptResult{StopReason: n.stop}
		}
	}
	return protocol.PromptResult{StopReason: protocol.StopMaxTurnRequests}
}

// addUserMessage puts a user message into the history and the transcript, and with announce
// shows it to the client. One messageId for its blocks, live and in the transcript load
// replays: the contract's user_message_chunk is {messageId, content}, and chunks of one message
// share it.
func (t *turn) addUserMessage(blocks []protocol.ContentBlock, announce bool) {
	t.addUserMessageShown(blocks, blocks, announce)
}

// addUserMessageShown is addUserMessage for a prompt the user typed as shown (a slash command)
// and the model reads as blocks (its expansion): the client and a replay show what was typed.
func (t *turn) addUserMessageShown(shown, blocks []protocol.ContentBlock, announce bool) {
	s := t.s
	userMsgID := s.nextMessageID()
	if announce {
		for _, b := range shown {
			b := b
			s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateUserMessageChunk, MessageID: userMsgID, Content: &b})
		}
	}
	if t.cp != nil {
		t.cp.MessageID = userMsgID
	}
	msg := t.userMessage(blocks)
	msg.Parts = append(msg.Parts, t.reviewNotes()...)
	recs := s.addHistory(nil, msg)
	for _, b := range shown {
		b := b
		if b.Type == "image" {
			b.Data = "" // the transcript keeps the fact of an image, not its bytes
		}
		recs = append(recs, record{T: recUpdate, Update: &protocol.SessionUpdate{SessionUpdate: protocol.UpdateUserMessageChunk, MessageID: userMsgID, Content: &b}})
	}
	s.record(recs...)
}

// fail answers a turn that ended on a provider (or provider setup) error: a normal result with
// _meta["agentd/error"] and a notice.
func (t *turn) fail(err error) protocol.PromptResult {
	if t.ctx.Err() != nil {
		return t.cancelled()
	}
	// A missing key is a typed *providers.Error of kind auth (below); anything else that is not
	// a provider error (a base URL the settings refuse) is the request's fault, never auth.
	meta := protocol.ErrorMeta{Kind: string(providers.ErrInvalidRequest), Message: err.Error()}
	var pe *providers.Error
	if errors.As(err, &pe) {
		if pe.Kind == providers.ErrCancelled && t.ctx.Err() != nil {
			return t.cancelled()
		}
		meta = protocol.ErrorMeta{Kind: string(pe.Kind), Message: pe.Message, RetryAfterMs: pe.RetryAfter.Milliseconds()}
		if meta.Message == "" {
			meta.Message = pe.Error()
		}
	}
	t.s.notice(protocol.SeverityError, "The model request failed: "+meta.Message, "")
	t.s.m.trace.event(t.s.id, "error", meta)
	return protocol.PromptResult{StopReason: protocol.StopEndTurn, Meta: protocol.Meta{"agentd/error": meta}}
}

func (s *Session) appendHistory(msgs ...providers.Message) {
	s.record(s.addHistory(nil, msgs...)...)
}

// addHistory appends msgs to the history and their records to recs, for the caller to write
// together with the records that go with them.
func (s *Session) addHistory(recs []record, msgs ...providers.Message) []record {
	s.mu.Lock()
	s.history = append(s.history, msgs...)
	s.mu.Unlock()
	for i := range msgs {
		recs = append(recs, record{T: recMessage, Message: &msgs[i]})
	}
	return recs
}

func (s *Session) historySnapshot() []providers.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.history[:len(s.history):len(s.history)]
}

// request builds the model request: the stable system prompt, the live context after it, and
// the history with old tool results elided.
func (t *turn) request() *providers.Request {
	t.refreshTools()
	s := t.s
	th := s.thinking(t.set)
	s.mu.Lock()
	msgs, gen := s.history[:len(s.history):len(s.history)], s.histGen
	s.mu.Unlock()
	stable := 0
	if !s.noElide {
		msgs, stable = s.elided.get(msgs, gen, keepToolResults, elideHead, elideBlock, elideMinSaving)
	}
	if !t.caps.Thinking {
		th = providers.Thinking{} // asked only of models that reason
	}
	if !t.caps.Images {
		// A tool's images, or a prompt's from before the session switched models, would fail
		// the whole request at a server without vision.
		msgs = withoutImages(msgs)
	}
	req := &providers.Request{
		Model:     t.pcfg.Model,
		System:    s.systemPrompt(),
		MaxTokens: t.set.MaxTokens,
		Thinking:  th,
	}
	switch t.mode {
	case config.ToolCallingText:
		req.System = t.textSystem()
		msgs = texttools.Render(msgs, t.textResults)
		if t.constrained() {
			req.ResponseSchema = t.envelopeSchema()
		}
	case config.ToolCallingNone:
		msgs = texttools.Render(respondAsText(msgs), t.textResults)
	default:
		msgs = respondAsText(msgs)
		req.Tools = t.specs()
		// The text protocols above render the history anew, message for message no longer.
		req.Stable = stable
	}
	req.Messages = t.placeContext(msgs)
	return req
}

// userMessage turns the prompt's content blocks into a model message. Resource links are read
// through the workspace, so the model sees the editor's unsaved text.
func (t *turn) userMessage(blocks []protocol.ContentBlock) providers.Message {
	msg := providers.Message{Role: providers.RoleUser}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			msg.Parts = append(msg.Parts, providers.Part{Type: providers.PartText, Text: b.Text})
		case "image":
			data, err := base64.StdEncoding.DecodeString(b.Data)
			if err != nil {
				msg.Parts = append(msg.Parts, providers.Part{Type: providers.PartText, Text: t.texts().Render("attachments.image_undecodable", nil)})
				continue
			}
			msg.Parts = append(msg.Parts, providers.Part{Type: providers.PartImage, MimeType: b.MimeType, Data: data})
		case "resource":
			if b.Resource == nil {
				continue
			}
			msg.Parts = append(msg.Parts, providers.Part{Type: providers.PartText, Text: fmt.Sprintf("<context uri=%q>\n%s\n</context>", b.Resource.URI, escapeEnvelope(b.Resource.Text))})
		case "resource_link":
			text := ""
			if server := t.mcpLinkServer(b); server != "" {
				text = t.readMCPLink(server, b)
			} else {
				text = t.readLink(b)
			}
			msg.Parts = append(msg.Parts, providers.Part{Type: providers.PartText, Text: text})
		}
	}
	return msg
}

func isCommand(blocks []protocol.ContentBlock, cmd string) bool {
	return len(blocks) == 1 && blocks[0].Type == "text" && strings.TrimSpace(blocks[0].Text) == cmd
}

// addUsage reports the context use after a model call, with the session's cumulative cost when
// the model's price is known, and adds it to the turn's usage. It returns the record that
// keeps the update (and the cost) in the transcript, for the step's one write.
func (t *turn) addUsage(u providers.Usage) record {
	in := u.Input + u.CacheRead + u.CacheWrite
	t.addTurnUsage(protocol.Usage{InputTokens: in, OutputTokens: u.Output, CachedReadTokens: u.CacheRead, CachedWriteTokens: u.CacheWrite, ThoughtTokens: u.Thinking, TotalTokens: in + u.Output})
	t.used = in + u.Output
	used, size := t.used, max(t.window, 0)
	up := protocol.SessionUpdate{SessionUpdate: protocol.UpdateUsageUpdate, Used: &used, Size: &size}
	t.s.mu.Lock()
	t.s.lastUsed = t.used
	t.s.mu.Unlock()
	// A subagent's calls cost its parent session: the sum is the top session's.
	top := t.s.top()
	top.mu.Lock()
	up.Cost = top.addCostLocked(t.set, t.pcfg.Model, u)
	sum := top.cost
	if top == t.s {
		t.s.usage = &up
	}
	top.mu.Unlock()
	t.s.update(up)
	return record{T: recUsage, Update: &up, Cost: sum}
}

// addCostLocked adds one model call to the session's cost (s.mu held) and returns the sum for
// the call's usage_update, nil when the call counted for nothing. A call whose price is unknown
// adds nothing, and its update carries no cost: the sum would no longer be what the session
// cost (the sum so far is kept for the next priced call); so does a call priced in another
// currency than the session's first, as the two do not add up.
func (s *Session) addCostLocked(set config.Settings, model string, u providers.Usage) *protocol.Cost {
	price, priced := providers.PriceOf(set, model)
	switch {
	case !priced:
		return nil
	case s.cost == nil:
		s.cost = &protocol.Cost{Amount: providers.CostOf(price, u), Currency: price.Currency}
	case s.cost.Currency == price.Currency:
		s.cost = &protocol.Cost{Amount: s.cost.Amount + providers.CostOf(price, u), Currency: s.cost.Currency}
	default:
		s.m.log.Warn("session cost: model priced in another currency than the session's; its calls are not counted")
		return nil
	}
	return s.cost
}

// addSide counts the side requests a turn made (a summary, the answer review) in its usage, as
// its own steps are, and in the session's cost.
func (t *turn) addSide(calls []sideCall) {
	for _, c := range calls {
		u := c.usage
		in := u.Input + u.CacheRead + u.CacheWrite
		t.usage.InputTokens += in
		t.usage.OutputTokens += u.Output
		t.usage.CachedReadTokens += u.CacheRead
		t.usage.CachedWriteTokens += u.CacheWrite
		t.usage.ThoughtTokens += u.Thinking
		t.usage.TotalTokens += in + u.Output
	}
	t.s.top().addSideCost(t.set, calls) // a subagent's side requests cost its parent session
}

// addSideCost counts side requests in the session's cost and, when that changed it, tells the
// client with a usage_update whose meter is the last one's (a side request is not in the
// conversation's context) and keeps it in the transcript, where load finds the sum.
func (s *Session) addSideCost(set config.Settings, calls []sideCall) {
	s.mu.Lock()
	var sum *protocol.Cost
	for _, c := range calls {
		if c.usage == (providers.Usage{}) {
			continue
		}
		if got := s.addCostLocked(set, c.model, c.usage); got != nil {
			sum = got
		}
	}
	if sum == nil {
		s.mu.Unlock()
		return
	}
	used, size := s.lastUsed, 0
	if s.usage != nil && s.usage.Size != nil {
		size = *s.usage.Size
	}
	up := protocol.SessionUpdate{SessionUpdate: protocol.UpdateUsageUpdate, Used: &used, Size: &size, Cost: sum}
	s.usage = &up
	s.mu.Unlock()
	s.update(up)
	s.record(record{T: recUsage, Update: &up, Cost: sum})
}

func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
