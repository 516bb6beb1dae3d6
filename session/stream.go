package session

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/session/internal/texttools"
	"github.com/agentd-dev/agentd/tools"
)

// maxArgsBytes bounds a call's JSON arguments; bigger ones are refused with an error result. It
// is the tools' own bound, so every call their schemas admit reaches them.
const maxArgsBytes = tools.MaxArgsBytes

// maxTitleArgs bounds the streamed arguments a tool's title is computed from while they stream.
const maxTitleArgs = 64 << 10

// call is one tool call of a model response, from its first event to its result.
type call struct {
	index     int
	id        string
	name      string
	tool      tools.Tool
	args      strings.Builder
	final     json.RawMessage
	complete  bool
	signature string
	title     string
	kind      string
	pace      argsPacer
	// invalid says why the call cannot run (unknown tool, bad arguments); it becomes the error
	// result the model reads.
	invalid string
	// respond marks the text protocol's terminal tool: not announced as a tool call, its text
	// is shown as the answer (session/textmode.go).
	respond bool

	mu       sync.Mutex
	finished bool
	res      tools.Result
	denied   string
	// recorded: the call's start is in the transcript already (an agent call, whose child's
	// calls follow it), so its final state is recorded as an update of it.
	recorded bool
}

// step is what one model call produced.
type step struct {
	msgID     string
	parts     []providers.Part
	calls     []*call
	stop      providers.StopReason
	err       *providers.Error
	usage     providers.Usage
	cancelled bool
}

// stream runs one model call, forwarding every delta to the client as it arrives, and appends
// the assistant message to the history. The provider's stream is read on its own goroutine, and
// that goroutine also applies each event (under mu) as it reads it: handing every event to the
// turn's goroutine cost a goroutine wake-up per streamed token, a quarter of a delta's CPU. The
// turn's goroutine only waits for the stream to end or the turn to be cancelled, so a cancel
// answers at once even if the provider is slow to notice; once it has (gone), the reading
// goroutine applies nothing more and leaves the range, which closes the provider's connection.
// What the events add up to is the assembly's business; stream carries out its effects.
func (t *turn) stream(req *providers.Request) *step {
	s := t.s
	a := newAssembly(s.nextMessageID())
	a.tooBig = argsTooBig(t.texts())
	var mu sync.Mutex
	gone := false
	cp := &checkpointer{s: s}
	// save runs on the checkpoint timer's goroutine.
	save := func() {
		mu.Lock()
		if !gone {
			cp.save(a)
		}
		mu.Unlock()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		seq := t.prov.Stream(t.ctx, req)
		switch {
		case t.mode == config.ToolCallingText && len(req.ResponseSchema) > 0:
			seq = texttools.ReplyEvents(seq, "text_"+a.st.msgID, t.invalidCall)
		case t.mode == config.ToolCallingText:
			seq = texttools.Events(seq, "text_"+a.st.msgID, t.invalidCall)
		}
		var effects []effect
		for ev := range seq {
			mu.Lock()
			if gone {
				mu.Unlock()
				return
			}
			s.m.trace.providerEvent(s.id, ev)
			effects = a.apply(ev, effects[:0])
			for _, e := range effects {
				t.do(a.st.msgID, e)
			}
			cp.progress(a, save)
			finished := a.finished
			mu.Unlock()
			if finished {
				return
			}
		}
	}()

	cancelled := false
	select {
	case <-done:
	case <-t.ctx.Done():
		cancelled = true
	}
	mu.Lock()
	gone = true
	mu.Unlock()
	dropped := a.end(cancelled || t.ctx.Err() != nil)
	st := a.st
	// A stream cut short (cancelled, failed) often ends before the provider says what it used:
	// its zero is no measurement, and a usage_update of 0 would empty the client's meter.
	var usageRec []record
	if st.usage != (providers.Usage{}) || (!cancelled && t.ctx.Err() == nil && st.err == nil) {
		usageRec = append(usageRec, t.addUsage(st.usage))
	}
	for _, c := range dropped {
		t.finishCall(c, tools.Result{Output: t.texts().Render("call.cancelled", nil), IsError: true}, "")
	}
	// The step's records (its message, what the client was shown of it, the end of its
	// checkpoints) go in one write.
	var recs []record
	if len(st.parts) > 0 {
		recs = s.addHistory(recs, providers.Message{Role: providers.RoleAssistant, Parts: st.parts})
	}
	if a.thoughtOut.Len() > 0 {
		recs = append(recs, record{T: recUpdate, Update: &protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentThoughtChunk, MessageID: st.msgID, Content: &protocol.ContentBlock{Type: "text", Text: a.thoughtOut.String()}}})
	}
	if a.textOut.Len() > 0 {
		recs = append(recs, record{T: recUpdate, Update: &protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: st.msgID, Content: &protocol.ContentBlock{Type: "text", Text: a.textOut.String()}}})
	}
	s.record(cp.done(append(recs, usageRec...), st.msgID)...)
	return st
}

// do carries out one effect of the assembly.
func (t *turn) do(msgID string, e effect) {
	switch e.kind {
	case effText:
		t.chunk(protocol.UpdateAgentMessageChunk, msgID, e.text)
	case effThought:
		t.chunk(protocol.UpdateAgentThoughtChunk, msgID, e.text)
	case effCallStart:
		t.startCall(e.c)
	case effCallArgs:
		// Arguments still streaming are previewed at a falling rate; the whole value is sent
		// once, when the call completes.
		if now := t.s.m.now(); e.c.pace.due(e.c.args.Len(), now) {
			t.previewArgs(e.c, now)
		}
	case effCallComplete:
		if e.c.respond {
			t.completeRespond(msgID, e.c)
			return
		}
		t.completeCall(e.c)
	case effNotice:
		t.s.notice(protocol.SeverityWarning, e.text, "")
	}
}

// chunkSender is what a Client may add to take a streamed text or thought chunk without the
// engine building its update, whose content block would go on the heap once per streamed token
// (the editor bridge does). It sends what Update would for that chunk with a text block.
type chunkSender interface {
	UpdateChunk(sessionID, kind, messageID, text string)
}

// chunk sends one streamed text or thought chunk.
func (t *turn) chunk(kind, msgID, text string) {
	if t.s.parent != nil {
		return // a subagent's text is its answer, the agent call's result (subagents.go)
	}
	if cs, ok := t.s.m.d.Client.(chunkSender); ok {
		cs.UpdateChunk(t.s.id, kind, msgID, text)
		return
	}
	t.s.update(protocol.SessionUpdate{SessionUpdate: kind, MessageID: msgID, Content: &protocol.ContentBlock{Type: "text", Text: text}})
}

// startCall announces a call as soon as the model starts it.
func (t *turn) startCall(c *call) {
	if t.mode == config.ToolCallingText && c.name == respondTool {
		c.respond = true // shown as the answer once complete, not as a call
		return
	}
	c.kind = protocol.KindOther
	if tool, ok := t.reg.Lookup(c.name); ok {
		c.tool = tool
		c.kind = tool.Kind()
		c.title = safeTitle(tool, nil)
	}
	if c.title == "" {
		c.title = c.name
		if c.title == "" {
			c.title = "Tool call"
		}
	}
	c.pace.start(t.s.m.now())
	t.s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCall, ToolCallID: c.id, Title: c.title, Kind: c.kind, Status: protocol.StatusPending, Meta: sourceMeta(c.tool)})
}

// previewArgs sends a preview of the arguments streamed so far (previewOf), with the tool's
// title for them when it changed.
func (t *turn) previewArgs(c *call, now time.Time) {
	args := c.args.String()
	raw, meta, cost := previewOf(args)
	if meta == nil {
		return
	}
	c.pace.sent(len(args), cost, now)
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: c.id, RawInput: raw, Meta: meta}
	if raw == nil && len(args) <= maxTitleArgs {
		raw = closeJSON([]byte(args))
	}
	t.setTitle(c, &u, raw)
	t.s.update(u)
}

// setTitle puts the tool's title for args on u when it differs from the one shown.
func (t *turn) setTitle(c *call, u *protocol.SessionUpdate, args json.RawMessage) {
	if c.tool == nil || args == nil {
		return
	}
	if title := safeTitle(c.tool, args); title != "" && title != c.title {
		c.title = title
		u.Title = title
	}
}

// completeCall checks the whole arguments (c.final) and sends them. The arguments of an invalid
// call are kept for the history when they are small, valid JSON.
func (t *turn) completeCall(c *call) {
	args := c.final
	switch {
	case c.invalid != "":
	case c.name == "":
		c.invalid = t.texts().Render("call.no_name", nil)
	case c.tool == nil:
		if tool, ok := t.reg.Lookup(c.name); ok {
			c.tool = tool
			c.kind = tool.Kind()
		} else {
			c.invalid = t.texts().Render("call.unknown_tool", prompts.Run{"TOOL": c.name, "TOOL_NAMES": strings.Join(t.toolNames(), ", ")})
		}
	}
	if c.invalid == "" {
		if len(args) > maxArgsBytes {
			c.invalid = argsTooBig(t.texts())
		} else if !json.Valid(args) {
			c.invalid = t.texts().Render("call.args_not_json", nil)
		} else if trimmed := strings.TrimSpace(string(args)); !strings.HasPrefix(trimmed, "{") {
			c.invalid = t.texts().Render("call.args_not_object", nil)
		}
	}
	if c.invalid != "" {
		t.s.notice(protocol.SeverityWarning, "The model made an invalid tool call", c.invalid)
		if !json.Valid(args) || len(args) > 64<<10 {
			c.final = nil
		}
		return
	}
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: c.id, RawInput: args}
	t.setTitle(c, &u, args)
	t.s.update(u)
}

func (t *turn) toolNames() []string {
	var names []string
	for _, tool := range t.reg.List() {
		names = append(names, tool.Name())
	}
	return names
}

func safeTitle(tool tools.Tool, args json.RawMessage) (title string) {
	defer func() {
		if recover() != nil {
			title = ""
		}
	}()
	return tool.Title(args)
}

// closeJSON turns a prefix of a JSON object into valid JSON by closing its open string, arrays
// and objects; nil when the prefix cannot be closed (it ends inside a key or a literal).
func closeJSON(b []byte) []byte {
	var stack []byte
	inStr, esc := false, false
	for _, ch := range b {
		if inStr {
			switch {
			case esc:
				esc = false
			case ch == '\\':
				esc = true
			case ch == '"':
				inStr = false
			}
			continue
		}
		switch ch {
		case '"':
			inStr = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	out := make([]byte, 0, len(b)+len(stack)+2)
	out = append(out, b...)
	if inStr {
		if esc {
			out = out[:len(out)-1]
		}
		// A trailing incomplete \u escape cannot be closed.
		if i := strings.LastIndex(string(out), `\u`); i >= 0 && len(out)-i < 6 {
			out = out[:i]
		}
		out = append(out, '"')
	}
	out = []byte(strings.TrimRight(string(out), " \t\r\n"))
	if n := len(out); n > 0 && out[n-1] == ',' {
		out = out[:n-1]
	}
	for i := len(stack) - 1; i >= 0; i-- {
		out = append(out, stack[i])
	}
	if !json.Valid(out) {
		return nil
	}
	return out
}
