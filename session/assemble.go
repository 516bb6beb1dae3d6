package session

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/providers"
)

// assembly folds the events of one model call into a step: the assistant message's parts, the
// calls with their arguments, the stop reason or the failure. It is a pure reduction: it talks to
// nobody, and what the client must be told comes back from apply as effects, which
// (*turn).stream carries out. That keeps the stream's bookkeeping testable on a table of event
// sequences, apart from the goroutine, the cancel and the transcript.
type assembly struct {
	st *step
	// text and thought hold the part being built; textOut and thoughtOut the whole texts of
	// the step, for the transcript.
	text, thought       strings.Builder
	thinkPart           *providers.Part
	textOut, thoughtOut strings.Builder
	byIndex             map[int]*call
	finished            bool
	// tooBig is what a call whose arguments grow past maxArgsBytes reads (call.args_too_big).
	tooBig string
}

// effectKind is what the stream must do after an event.
type effectKind uint8

const (
	effText         effectKind = iota + 1 // forward text as an agent_message_chunk
	effThought                            // forward text as an agent_thought_chunk
	effCallStart                          // announce call c
	effCallArgs                           // c's streamed arguments grew
	effCallComplete                       // c's arguments are whole (in c.final): check and send them
	effNotice                             // show text as a warning notice
)

// effect is one thing the stream must do; c is set for the call effects, text for the others.
type effect struct {
	kind effectKind
	c    *call
	text string
}

func newAssembly(msgID string) *assembly {
	return &assembly{st: &step{msgID: msgID}, byIndex: map[int]*call{}}
}

// argsTooBig is what a call whose arguments exceed maxArgsBytes reads.
func argsTooBig(set *prompts.Set) string {
	return set.Render("call.args_too_big", prompts.Run{"MAX_BYTES": strconv.Itoa(maxArgsBytes)})
}

func (a *assembly) flushText() {
	if a.text.Len() > 0 {
		a.st.parts = append(a.st.parts, providers.Part{Type: providers.PartText, Text: a.text.String()})
		a.text.Reset()
	}
}

func (a *assembly) flushThought() {
	if a.thinkPart != nil {
		a.thinkPart.Text = a.thought.String()
		a.st.parts = append(a.st.parts, *a.thinkPart)
		a.thinkPart = nil
		a.thought.Reset()
	}
}

// call returns the call an event belongs to, creating it (and an effCallStart) on its first
// event.
func (a *assembly) call(ev providers.Event, out []effect) (*call, []effect) {
	if c, ok := a.byIndex[ev.Index]; ok {
		return c, out
	}
	c := &call{index: ev.Index, id: ev.ToolCallID, name: ev.ToolName}
	if c.id == "" {
		c.id = fmt.Sprintf("call_%s_%d", a.st.msgID, len(a.st.calls))
	}
	a.byIndex[ev.Index] = c
	a.st.calls = append(a.st.calls, c)
	return c, append(out, effect{kind: effCallStart, c: c})
}

// apply folds one event in and appends what the stream must do to out.
func (a *assembly) apply(ev providers.Event, out []effect) []effect {
	st := a.st
	switch ev.Type {
	case providers.EventTextDelta:
		if ev.Text == "" {
			return out
		}
		a.flushThought()
		a.text.WriteString(ev.Text)
		a.textOut.WriteString(ev.Text)
		out = append(out, effect{kind: effText, text: ev.Text})
	case providers.EventThinkingDelta:
		a.flushText()
		if ev.Redacted != "" {
			a.flushThought()
			st.parts = append(st.parts, providers.Part{Type: providers.PartThinking, Redacted: ev.Redacted})
			return out
		}
		if a.thinkPart == nil {
			a.thinkPart = &providers.Part{Type: providers.PartThinking}
		}
		if ev.Signature != "" {
			a.thinkPart.Signature = ev.Signature
		}
		if ev.Text != "" {
			a.thought.WriteString(ev.Text)
			a.thoughtOut.WriteString(ev.Text)
			out = append(out, effect{kind: effThought, text: ev.Text})
		}
	case providers.EventToolCallStarted:
		a.flushText()
		a.flushThought()
		_, out = a.call(ev, out)
	case providers.EventToolCallArgsDelta:
		var c *call
		c, out = a.call(ev, out)
		if c.args.Len()+len(ev.Text) > maxArgsBytes {
			if c.invalid = a.tooBig; c.invalid == "" { // an assembly a test built bare
				c.invalid = argsTooBig(prompts.Default())
			}
			return out
		}
		c.args.WriteString(ev.Text)
		out = append(out, effect{kind: effCallArgs, c: c})
	case providers.EventToolCallCompleted:
		var c *call
		c, out = a.call(ev, out)
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
		c.final = args
		out = append(out, effect{kind: effCallComplete, c: c})
	case providers.EventUsage:
		st.usage = ev.Usage
	case providers.EventNotice:
		out = append(out, effect{kind: effNotice, text: ev.Text})
		// A dialect that drops a malformed call says so with a notice naming it; the call then
		// fails with that reason instead of a generic "incomplete arguments".
		if c, ok := a.byIndex[ev.Index]; ok && ev.ToolCallID != "" && c.id == ev.ToolCallID && !c.complete {
			c.invalid = ev.Text
		}
	case providers.EventCompleted:
		st.stop = ev.StopReason
		a.finished = true
	case providers.EventFailed:
		st.err = ev.Err
		if st.err == nil {
			st.err = &providers.Error{Kind: providers.ErrServer, Message: "the provider failed without saying why"}
		}
		a.finished = true
	}
	return out
}

// end closes the step once the events stop: cancelled says the turn's context ended. Calls
// that never completed cannot run; a cancelled or failed step keeps only its text, and the calls
// it drops are returned so the stream can report them failed. The step's parts are then the
// assistant message for the history.
func (a *assembly) end(cancelled bool) (dropped []*call) {
	st := a.st
	if cancelled && !a.finished {
		st.cancelled = true
	}
	if !a.finished && !st.cancelled {
		st.err = &providers.Error{Kind: providers.ErrNetwork, Message: "the model's response ended before it was complete"}
	}
	a.flushText()
	a.flushThought()
	for _, c := range st.calls {
		if !c.complete && c.invalid == "" {
			c.invalid = "the call's arguments were not complete when the response ended"
		}
	}
	if st.cancelled || st.err != nil {
		dropped = st.calls
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
	return dropped
}
