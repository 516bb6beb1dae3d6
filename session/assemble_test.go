package session

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
)

// TestAssembly runs the stream's reduction over event sequences and checks the step it builds,
// the effects it asks for and the calls a cancelled or failed step drops.
func TestAssembly(t *testing.T) {
	text := func(s string) providers.Event { return providers.Event{Type: providers.EventTextDelta, Text: s} }
	think := func(s, sig string) providers.Event {
		return providers.Event{Type: providers.EventThinkingDelta, Text: s, Signature: sig}
	}
	started := func(i int, id, name string) providers.Event {
		return providers.Event{Type: providers.EventToolCallStarted, Index: i, ToolCallID: id, ToolName: name}
	}
	args := func(i int, s string) providers.Event {
		return providers.Event{Type: providers.EventToolCallArgsDelta, Index: i, Text: s}
	}
	completed := func(i int, a string) providers.Event {
		return providers.Event{Type: providers.EventToolCallCompleted, Index: i, Args: json.RawMessage(a)}
	}
	done := func(r providers.StopReason) providers.Event {
		return providers.Event{Type: providers.EventCompleted, StopReason: r}
	}
	tests := []struct {
		name      string
		events    []providers.Event
		cancelled bool
		effects   []string
		parts     []string
		calls     []string // the step's calls after end: id name invalid
		dropped   []string
		stop      providers.StopReason
		err       providers.ErrorKind
		wasCancel bool
	}{
		{
			name:    "text deltas join into one part, each forwarded",
			events:  []providers.Event{text("Hel"), text(""), text("lo"), done(providers.StopEndTurn)},
			effects: []string{"text Hel", "text lo"},
			parts:   []string{"text Hello"},
			stop:    providers.StopEndTurn,
		},
		{
			name:    "thinking then text: two parts in order, the signature kept",
			events:  []providers.Event{think("hm", ""), think("m", "sig1"), text("Yes"), think("again", ""), done(providers.StopEndTurn)},
			effects: []string{"thought hm", "thought m", "text Yes", "thought again"},
			parts:   []string{"thinking hmm sig1", "text Yes", "thinking again "},
			stop:    providers.StopEndTurn,
		},
		{
			name:    "redacted thinking is a part of its own and is not forwarded",
			events:  []providers.Event{think("a", ""), {Type: providers.EventThinkingDelta, Redacted: "xx"}, done(providers.StopEndTurn)},
			effects: []string{"thought a"},
			parts:   []string{"thinking a ", "redacted xx"},
			stop:    providers.StopEndTurn,
		},
		{
			name: "a streamed call: announced, args forwarded, completed from the streamed text",
			events: []providers.Event{
				text("Reading."), started(0, "c1", "read_file"), args(0, `{"path":`), args(0, `"a"}`),
				{Type: providers.EventToolCallCompleted, Index: 0, Signature: "s"}, done(providers.StopToolUse),
			},
			effects: []string{"text Reading.", "start c1 read_file", "args c1 {\"path\":", "args c1 {\"path\":\"a\"}", "complete c1 {\"path\":\"a\"}"},
			parts:   []string{"text Reading.", `call c1 read_file {"path":"a"} s`},
			calls:   []string{"c1 read_file "},
			stop:    providers.StopToolUse,
		},
		{
			name: "a call first seen on its completion gets an id, a name and empty arguments",
			events: []providers.Event{
				{Type: providers.EventToolCallCompleted, Index: 3, ToolName: "list_dir"}, done(providers.StopToolUse),
			},
			effects: []string{"start call_m_0 list_dir", "complete call_m_0 {}"},
			parts:   []string{"call call_m_0 list_dir {} "},
			calls:   []string{"call_m_0 list_dir "},
			stop:    providers.StopToolUse,
		},
		{
			name:    "invalid final arguments become {} in the history",
			events:  []providers.Event{started(0, "c1", "x"), completed(0, `{"a":`), done(providers.StopToolUse)},
			effects: []string{"start c1 x", "complete c1 {\"a\":"},
			parts:   []string{"call c1 x {} "},
			calls:   []string{"c1 x "},
			stop:    providers.StopToolUse,
		},
		{
			name: "two calls keep the model's order; an incomplete one is invalid",
			events: []providers.Event{
				started(1, "b", "t2"), started(0, "a", "t1"), completed(0, `{}`), done(providers.StopToolUse),
			},
			effects: []string{"start b t2", "start a t1", "complete a {}"},
			parts:   []string{"call b t2 {} ", "call a t1 {} "},
			calls:   []string{"b t2 the call's arguments were not complete when the response ended", "a t1 "},
			stop:    providers.StopToolUse,
		},
		{
			name: "a notice naming an unfinished call makes it fail with that reason",
			events: []providers.Event{
				started(0, "c1", "x"), {Type: providers.EventNotice, Index: 0, ToolCallID: "c1", Text: "dropped a malformed call"},
				{Type: providers.EventNotice, Text: "retrying"}, done(providers.StopToolUse),
			},
			effects: []string{"start c1 x", "notice dropped a malformed call", "notice retrying"},
			parts:   []string{"call c1 x {} "},
			calls:   []string{"c1 x dropped a malformed call"},
			stop:    providers.StopToolUse,
		},
		{
			name:    "arguments over the bound make the call invalid and are not forwarded",
			events:  []providers.Event{started(0, "c1", "x"), args(0, strings.Repeat("a", maxArgsBytes+1)), done(providers.StopToolUse)},
			effects: []string{"start c1 x"},
			parts:   []string{"call c1 x {} "},
			calls:   []string{fmt.Sprintf("c1 x the arguments of this call exceed %d bytes; send smaller calls", maxArgsBytes)},
			stop:    providers.StopToolUse,
		},
		{
			name:   "usage is kept; events after the end are not read",
			events: []providers.Event{{Type: providers.EventUsage, Usage: providers.Usage{Input: 7}}, done(providers.StopEndTurn), text("late")},
			parts:  nil,
			stop:   providers.StopEndTurn,
		},
		{
			name:    "a failure keeps the text, drops thinking and calls",
			events:  []providers.Event{think("t", ""), text("part"), started(0, "c1", "x"), {Type: providers.EventFailed, Err: &providers.Error{Kind: providers.ErrRateLimit}}},
			effects: []string{"thought t", "text part", "start c1 x"},
			parts:   []string{"text part"},
			dropped: []string{"c1"},
			err:     providers.ErrRateLimit,
		},
		{
			name:   "a failure without an error is a server error",
			events: []providers.Event{{Type: providers.EventFailed}},
			err:    providers.ErrServer,
		},
		{
			name:    "a stream that stops without an end is a network error",
			events:  []providers.Event{text("cut")},
			effects: []string{"text cut"},
			parts:   []string{"text cut"},
			err:     providers.ErrNetwork,
		},
		{
			name:      "a cancel keeps the text and drops the calls",
			events:    []providers.Event{text("so far"), started(0, "c1", "x"), args(0, `{"a"`)},
			cancelled: true,
			effects:   []string{"text so far", "start c1 x", "args c1 {\"a\""},
			parts:     []string{"text so far"},
			dropped:   []string{"c1"},
			wasCancel: true,
		},
		{
			name:      "a cancel after the end changes nothing",
			events:    []providers.Event{text("all"), done(providers.StopEndTurn)},
			cancelled: true,
			effects:   []string{"text all"},
			parts:     []string{"text all"},
			stop:      providers.StopEndTurn,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newAssembly("m")
			var effects []string
			for _, ev := range tc.events {
				if a.finished {
					break
				}
				for _, e := range a.apply(ev, nil) {
					effects = append(effects, describeEffect(e))
				}
			}
			var dropped []string
			for _, c := range a.end(tc.cancelled) {
				dropped = append(dropped, c.id)
			}
			st := a.st
			var parts, calls []string
			for _, p := range st.parts {
				parts = append(parts, describePart(p))
			}
			for _, c := range st.calls {
				calls = append(calls, c.id+" "+c.name+" "+c.invalid)
			}
			check := func(what string, got, want []string) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Errorf("%s:\n got %q\nwant %q", what, got, want)
				}
			}
			check("effects", effects, tc.effects)
			check("parts", parts, tc.parts)
			check("calls", calls, tc.calls)
			check("dropped", dropped, tc.dropped)
			if st.stop != tc.stop {
				t.Errorf("stop = %q, want %q", st.stop, tc.stop)
			}
			var kind providers.ErrorKind
			if st.err != nil {
				kind = st.err.Kind
			}
			if kind != tc.err {
				t.Errorf("error kind = %q, want %q", kind, tc.err)
			}
			if st.cancelled != tc.wasCancel {
				t.Errorf("cancelled = %v, want %v", st.cancelled, tc.wasCancel)
			}
		})
	}
}

func TestAssemblyKeepsUsageAndWholeTexts(t *testing.T) {
	a := newAssembly("m")
	for _, ev := range []providers.Event{
		{Type: providers.EventThinkingDelta, Text: "a"}, {Type: providers.EventTextDelta, Text: "b"},
		{Type: providers.EventThinkingDelta, Text: "c"}, {Type: providers.EventTextDelta, Text: "d"},
		{Type: providers.EventUsage, Usage: providers.Usage{Input: 3, Output: 4}},
		{Type: providers.EventCompleted, StopReason: providers.StopEndTurn},
	} {
		a.apply(ev, nil)
	}
	a.end(false)
	if a.textOut.String() != "bd" || a.thoughtOut.String() != "ac" {
		t.Errorf("whole texts = %q, %q; want \"bd\", \"ac\"", a.textOut.String(), a.thoughtOut.String())
	}
	if a.st.usage != (providers.Usage{Input: 3, Output: 4}) {
		t.Errorf("usage = %+v", a.st.usage)
	}
}

func describeEffect(e effect) string {
	switch e.kind {
	case effText:
		return "text " + e.text
	case effThought:
		return "thought " + e.text
	case effCallStart:
		return "start " + e.c.id + " " + e.c.name
	case effCallArgs:
		return "args " + e.c.id + " " + e.c.args.String()
	case effCallComplete:
		return "complete " + e.c.id + " " + string(e.c.final)
	case effNotice:
		return "notice " + e.text
	}
	return fmt.Sprintf("effect %d", e.kind)
}

func describePart(p providers.Part) string {
	switch p.Type {
	case providers.PartText:
		return "text " + p.Text
	case providers.PartThinking:
		if p.Redacted != "" {
			return "redacted " + p.Redacted
		}
		return "thinking " + p.Text + " " + p.Signature
	case providers.PartToolCall:
		return "call " + p.ToolCallID + " " + p.ToolName + " " + string(p.Args) + " " + p.Signature
	}
	return string(p.Type)
}
