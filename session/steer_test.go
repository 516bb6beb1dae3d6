package session

import (
	"context"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

func steerParams(sid, text string) protocol.PromptParams {
	return protocol.PromptParams{SessionID: sid, Prompt: []protocol.ContentBlock{{Type: "text", Text: text}}}
}

// TestSteerJoinsTheRunningTurn steers while the turn waits for a permission: the turn is not
// cancelled, its tool call finishes, and the next model call sees the steering message as a user
// message after the tool result.
func TestSteerJoinsTheRunningTurn(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("Done, in French.")})
	h.newSession()
	h.client.answer = nil // the permission waits until the test answers it below
	ch := h.promptAsync(context.Background(), "edit")
	h.client.waitPermission(t, 1)
	res, err := h.m.Steer(context.Background(), steerParams(h.sid, "answer in French"))
	if err != nil || !res.Accepted {
		t.Fatalf("steer during a turn = %+v, %v", res, err)
	}
	// Allow the pending edit through a session grant, which answers a pending request.
	s, _ := h.m.get(h.sid)
	s.remember(grant{Tool: "edit_file", Allow: true, Scope: "session"})
	got := <-ch
	if got.StopReason != protocol.StopEndTurn {
		t.Fatalf("stopReason = %q", got.StopReason)
	}
	if f := h.ws.file(h.path("a.txt")); f != "ALPHA\n" {
		t.Errorf("the tool call did not finish: a.txt = %q", f)
	}
	reqs := h.prov.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != providers.RoleUser || len(last.Parts) == 0 || !strings.Contains(last.Parts[0].Text, "answer in French") {
		t.Errorf("the second model call does not end with the steering message: %+v", last)
	}
	var shown bool
	for _, u := range h.client.snapshot() {
		if u.SessionUpdate == protocol.UpdateUserMessageChunk && u.Content != nil && u.Content.Text == "answer in French" {
			shown = true
		}
	}
	if !shown {
		t.Error("the steering message was not shown as a user_message_chunk")
	}
	// The turn is over: a steer now is refused and changes nothing.
	res, err = h.m.Steer(context.Background(), steerParams(h.sid, "too late"))
	if err != nil || res.Accepted {
		t.Errorf("steer after the turn = %+v, %v", res, err)
	}
}

// TestSteerKeepsATurnTheModelMeantToEnd steers while the model streams its final answer: the
// turn goes on to a second model call instead of dropping the accepted message.
func TestSteerKeepsATurnTheModelMeantToEnd(t *testing.T) {
	steered := make(chan struct{})
	var h *harness
	h = newHarness(t, reply{fn: func(ctx context.Context, yield func(providers.Event) bool) {
		yield(providers.Event{Type: providers.EventTextDelta, Text: "Almost done"})
		<-steered
		yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
	}}, reply{events: textReply("Also the tests.")})
	h.newSession()
	ch := h.promptAsync(context.Background(), "go")
	h.client.waitFor(t, "text", func(us []protocol.SessionUpdate) bool {
		return len(kinds(us, protocol.UpdateAgentMessageChunk)) > 0
	})
	res, err := h.m.Steer(context.Background(), steerParams(h.sid, "and the tests"))
	close(steered)
	if err != nil || !res.Accepted {
		t.Fatalf("steer = %+v, %v", res, err)
	}
	if got := <-ch; got.StopReason != protocol.StopEndTurn {
		t.Fatalf("stopReason = %q", got.StopReason)
	}
	if n := len(h.prov.requests()); n != 2 {
		t.Fatalf("%d model calls, want 2 (the steering message was dropped)", n)
	}
}

func TestSteerValidates(t *testing.T) {
	h := newHarness(t)
	h.newSession()
	if _, err := h.m.Steer(context.Background(), protocol.PromptParams{SessionID: h.sid}); err == nil {
		t.Error("a steer without a prompt was accepted")
	}
	if _, err := h.m.Steer(context.Background(), steerParams("nope", "x")); err == nil {
		t.Error("a steer of an unknown session was accepted")
	}
	if res, err := h.m.Steer(context.Background(), steerParams(h.sid, "x")); err != nil || res.Accepted {
		t.Errorf("steer with no turn = %+v, %v", res, err)
	}
}

// TestSteerAfterTheLastBoundaryIsRefused: once the turn has passed its last step boundary with no
// steering message waiting, it is ending, and a steer is refused (the client sends a prompt
// instead) rather than accepted and dropped with the turn.
func TestSteerAfterTheLastBoundaryIsRefused(t *testing.T) {
	h := newHarness(t)
	h.newSession()
	s, _ := h.m.get(h.sid)
	s.mu.Lock()
	s.running = true // a turn is streaming its final answer
	s.mu.Unlock()
	tr := &turn{s: s}
	if tr.steerOrEnd() {
		t.Fatal("steerOrEnd took a message when none was waiting")
	}
	res, err := h.m.Steer(context.Background(), steerParams(h.sid, "too late"))
	if err != nil || res.Accepted {
		t.Errorf("steer after the last boundary = %+v, %v; want refused", res, err)
	}
	s.mu.Lock()
	s.running, s.ending = false, false
	s.mu.Unlock()
}
