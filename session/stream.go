package session

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/rpc/protocol"
	"github.com/agentd-dev/agentd/tools"
)

// maxArgsBytes bounds a call's JSON arguments; bigger ones are refused with an error result. It
// is the tools' own bound, so every call their schemas admit reaches them.
const maxArgsBytes = tools.MaxArgsBytes

// maxPartialArgs bounds the streamed arguments re-sent as rawInput while a call streams.
const maxPartialArgs = 64 << 10

// argsThrottle is the least time between two rawInput updates of one streaming call.
const argsThrottle = 40 * time.Millisecond

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
	lastEmit  time.Time
	// invalid says why the call cannot run (unknown tool, bad arguments); it becomes the error
	// result the model reads.
	invalid string

	mu       sync.Mutex
	finished bool
	res      tools.Result
	denied   string
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
// the assistant message to the history. The provider's stream is read on its own goroutine so
// a cancel answers at once even if the provider is slow to notice; leaving the range closes
// the provider's connection.
func (t *turn) stream(req *providers.Request) *step {
	s := t.s
	st := &step{msgID: s.nextMessageID()}
	events := make(chan providers.Event, 32)
	quit := make(chan struct{})
	go func() {
		defer close(events)
		for ev := range t.prov.Stream(t.ctx, req) {
			select {
			case events <- ev:
			case <-quit:
				return
			}
		}
	}()
	defer close(quit)

	var text, thought strings.Builder
	var thinkPart *providers.Part
	var textOut, thoughtOut strings.Builder // whole texts, for the transcript
	flushText := func() {
		if text.Len() > 0 {
			st.parts = append(st.parts, providers.Part{Type: providers.PartText, Text: text.String()})
			text.Reset()
		}
	}
	flushThought := func() {
		if thinkPart != nil {
			thinkPart.Text = thought.String()
			st.parts = append(st.parts, *thinkPart)
			thinkPart = nil
			thought.Reset()
		}
	}
	byIndex := map[int]*call{}
	getCall := func(ev providers.Event) *call {
		if c, ok := byIndex[ev.Index]; ok {
			return c
		}
		c := &call{index: ev.Index, id: ev.ToolCallID, name: ev.ToolName}
		if c.id == "" {
			c.id = fmt.Sprintf("call_%s_%d", st.msgID, len(st.calls))
		}
		byIndex[ev.Index] = c
		st.calls = append(st.calls, c)
		t.startCall(c)
		return c
	}
	finished := false
loop:
	for !finished {
		var ev providers.Event
		var ok bool
		select {
		case ev, ok = <-events:
			if !ok {
				break loop
			}
		case <-t.ctx.Done():
			st.cancelled = true
			break loop
		}
		s.m.trace.providerEvent(s.id, ev)
		switch ev.Type {
		case providers.EventTextDelta:
			if ev.Text == "" {
				continue
			}
			flushThought()
			text.WriteString(ev.Text)
			textOut.WriteString(ev.Text)
			s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: st.msgID, Content: &protocol.ContentBlock{Type: "text", Text: ev.Text}})
		case providers.EventThinkingDelta:
			flushText()
			if ev.Redacted != "" {
				flushThought()
				st.parts = append(st.parts, providers.Part{Type: providers.PartThinking, Redacted: ev.Redacted})
				continue
			}
			if thinkPart == nil {
				thinkPart = &providers.Part{Type: providers.PartThinking}
			}
			if ev.Signature != "" {
				thinkPart.Signature = ev.Signature
			}
			if ev.Text != "" {
				thought.WriteString(ev.Text)
				thoughtOut.WriteString(ev.Text)
				s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentThoughtChunk, MessageID: st.msgID, Content: &protocol.ContentBlock{Type: "text", Text: ev.Text}})
			}
		case providers.EventToolCallStarted:
			flushText()
			flushThought()
			getCall(ev)
		case providers.EventToolCallArgsDelta:
			c := getCall(ev)
			if c.args.Len()+len(ev.Text) > maxArgsBytes {
				c.invalid = fmt.Sprintf("the arguments of this call exceed %d bytes; send smaller calls", maxArgsBytes)
				continue
			}
			c.args.WriteString(ev.Text)
			// Partial arguments are shown while they are small; a big file's content is sent
			// once, whole, when the call completes.
			if c.args.Len() <= maxPartialArgs && time.Since(c.lastEmit) >= argsThrottle {
				t.argsUpdate(c, []byte(c.args.String()), false)
			}
		case providers.EventToolCallCompleted:
			c := getCall(ev)
			if c.name == "" && ev.ToolName != "" {
				c.name = ev.ToolName
			}
			c.signature = ev.Signature
			c.complete = true
			args := ev.Args
			if len(args) == 0 {
				args = json.RawMessage(c.args.String())
			}
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			t.completeCall(c, args)
		case providers.EventUsage:
			st.usage = ev.Usage
		case providers.EventNotice:
			s.notice(protocol.SeverityWarning, ev.Text, "")
			// A dialect that drops a malformed call says so with a notice naming it; the call
			// then fails with that reason instead of a generic "incomplete arguments".
			if c, ok := byIndex[ev.Index]; ok && ev.ToolCallID != "" && c.id == ev.ToolCallID && !c.complete {
				c.invalid = ev.Text
			}
		case providers.EventCompleted:
			st.stop = ev.StopReason
			finished = true
		case providers.EventFailed:
			st.err = ev.Err
			if st.err == nil {
				st.err = &providers.Error{Kind: providers.ErrServer, Message: "the provider failed without saying why"}
			}
			finished = true
		}
	}
	if !finished && !st.cancelled {
		if t.ctx.Err() != nil {
			st.cancelled = true
		} else {
			st.err = &providers.Error{Kind: providers.ErrNetwork, Message: "the model's response ended before it was complete"}
		}
	}
	flushText()
	flushThought()
	t.addUsage(st.usage)

	// Calls that never completed cannot run; a cancelled or failed step keeps only its text.
	for _, c := range st.calls {
		if !c.complete && c.invalid == "" {
			c.invalid = "the call's arguments were not complete when the response ended"
		}
	}
	if st.cancelled || st.err != nil {
		for _, c := range st.calls {
			t.finishCall(c, tools.Result{Output: "cancelled", IsError: true}, "")
		}
		var kept []providers.Part
		for _, p := range st.parts {
			if p.Type == providers.PartText {
				kept = append(kept, p)
			}
		}
		st.parts, st.calls = kept, nil
	}
	for _, c := range st.calls {
		args := c.final
		if !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		st.parts = append(st.parts, providers.Part{Type: providers.PartToolCall, ToolCallID: c.id, ToolName: c.name, Args: args, Signature: c.signature})
	}
	if len(st.parts) > 0 {
		s.appendHistory(providers.Message{Role: providers.RoleAssistant, Parts: st.parts})
	}
	if thoughtOut.Len() > 0 {
		s.record(record{T: recUpdate, Update: &protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentThoughtChunk, MessageID: st.msgID, Content: &protocol.ContentBlock{Type: "text", Text: thoughtOut.String()}}})
	}
	if textOut.Len() > 0 {
		s.record(record{T: recUpdate, Update: &protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: st.msgID, Content: &protocol.ContentBlock{Type: "text", Text: textOut.String()}}})
	}
	return st
}

// startCall announces a call as soon as the model starts it.
func (t *turn) startCall(c *call) {
	c.kind = protocol.KindOther
	if tool, ok := t.s.m.d.Tools.Lookup(c.name); ok {
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
	c.lastEmit = time.Now()
	t.s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCall, ToolCallID: c.id, Title: c.title, Kind: c.kind, Status: protocol.StatusPending})
}

// argsUpdate sends the arguments streamed so far as rawInput, closed into valid JSON.
func (t *turn) argsUpdate(c *call, partial []byte, final bool) {
	raw := partial
	if !final {
		raw = closeJSON(partial)
		if raw == nil {
			return
		}
	}
	c.lastEmit = time.Now()
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: c.id, RawInput: raw}
	if c.tool != nil {
		if title := safeTitle(c.tool, raw); title != "" && title != c.title {
			c.title = title
			u.Title = title
		}
	}
	t.s.update(u)
}

// completeCall checks the whole arguments and sends them.
func (t *turn) completeCall(c *call, args json.RawMessage) {
	switch {
	case c.invalid != "":
	case c.name == "":
		c.invalid = "this tool call has no tool name; name one of the available tools"
	case c.tool == nil:
		if tool, ok := t.s.m.d.Tools.Lookup(c.name); ok {
			c.tool = tool
			c.kind = tool.Kind()
		} else {
			c.invalid = fmt.Sprintf("there is no tool named %q; the available tools are: %s", c.name, strings.Join(t.toolNames(), ", "))
		}
	}
	if c.invalid == "" {
		if len(args) > maxArgsBytes {
			c.invalid = fmt.Sprintf("the arguments of this call exceed %d bytes; send smaller calls", maxArgsBytes)
		} else if !json.Valid(args) {
			c.invalid = "the arguments are not valid JSON; send one JSON object matching the tool's schema"
		} else if trimmed := strings.TrimSpace(string(args)); !strings.HasPrefix(trimmed, "{") {
			c.invalid = "the arguments must be a JSON object matching the tool's schema"
		}
	}
	if c.invalid != "" {
		t.s.notice(protocol.SeverityWarning, "The model made an invalid tool call", c.invalid)
		if json.Valid(args) && len(args) <= 64<<10 {
			c.final = args
		}
		return
	}
	c.final = args
	t.argsUpdate(c, args, true)
}

func (t *turn) toolNames() []string {
	var names []string
	for _, tool := range t.s.m.d.Tools.List() {
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
