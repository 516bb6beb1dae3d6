package session

import (
	"context"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

// The cancel tests assert that a cancelled prompt answers while the work it was waiting on
// would never end by itself (a provider blocked until its context ends, an editor that never
// answers): the answer proves the cancel was not queued behind that work. How soon it answers
// (the contract's 100 ms) is measured by BenchmarkCancelAnswer, not asserted: a wall-time bound
// flakes on a loaded machine. hangGuard only turns a hang into a failure.
const hangGuard = 20 * time.Second

func blockBeforeFirstToken() reply {
	return reply{fn: func(ctx context.Context, yield func(providers.Event) bool) {
		<-ctx.Done()
	}}
}

func streamForever() reply {
	return reply{fn: func(ctx context.Context, yield func(providers.Event) bool) {
		for {
			if !yield(providers.Event{Type: providers.EventTextDelta, Text: "tok "}) {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	}}
}

// cancelAndExpect cancels the harness's session and checks the prompt answers "cancelled", then
// that the same session takes a new prompt normally.
func (h *harness) cancelAndExpect(ch <-chan protocol.PromptResult) {
	h.t.Helper()
	h.m.Cancel(h.sid)
	res := waitResult(h.t, ch, hangGuard)
	if res.StopReason != protocol.StopCancelled {
		h.t.Fatalf("stopReason = %q, want cancelled", res.StopReason)
	}
	h.prov.mu.Lock()
	h.prov.replies = []reply{{events: textReply("fresh answer")}}
	h.prov.mu.Unlock()
	if res := h.prompt("next"); res.StopReason != protocol.StopEndTurn {
		h.t.Fatalf("next prompt stopReason = %q", res.StopReason)
	}
}

func (h *harness) waitStarted() {
	h.t.Helper()
	select {
	case <-h.prov.started:
	case <-time.After(hangGuard):
		h.t.Fatal("model call never started")
	}
}

func (h *harness) waitProviderClosed() {
	h.t.Helper()
	select {
	case <-h.prov.closed:
	case <-time.After(hangGuard):
		h.t.Fatal("the provider stream was not closed after cancel")
	}
}

func TestCancelBeforeFirstToken(t *testing.T) {
	h := newHarness(t, blockBeforeFirstToken())
	h.newSession()
	ch := h.promptAsync(context.Background(), "hi")
	h.waitStarted()
	h.cancelAndExpect(ch)
	h.waitProviderClosed()
}

func TestCancelWhileStreaming(t *testing.T) {
	h := newHarness(t, streamForever())
	h.newSession()
	ch := h.promptAsync(context.Background(), "hi")
	h.client.waitFor(t, "streaming", func(us []protocol.SessionUpdate) bool {
		return len(kinds(us, protocol.UpdateAgentMessageChunk)) > 3
	})
	h.cancelAndExpect(ch)
	h.waitProviderClosed()
	// The stream ended before the model said what it used: no usage_update of 0 empties the
	// client's meter.
	for _, u := range kinds(h.client.snapshot(), protocol.UpdateUsageUpdate) {
		if u.Used != nil && *u.Used == 0 {
			t.Errorf("a cancelled stream sent usage_update used 0: %+v", u)
		}
	}
	// The partial answer is kept in the history; the next request carries it.
	reqs := h.prov.requests()
	msgs := reqs[len(reqs)-1].Messages
	if len(msgs) != 3 || msgs[1].Role != providers.RoleAssistant || msgs[1].Parts[0].Text == "" {
		t.Fatalf("history after cancel: %+v", msgs)
	}
}

func TestCancelWhileToolCallStreams(t *testing.T) {
	h := newHarness(t, reply{fn: func(ctx context.Context, yield func(providers.Event) bool) {
		yield(providers.Event{Type: providers.EventToolCallStarted, ToolCallID: "c1", ToolName: "read_file"})
		yield(providers.Event{Type: providers.EventToolCallArgsDelta, ToolCallID: "c1", Text: `{"pa`})
		<-ctx.Done()
	}})
	h.newSession()
	ch := h.promptAsync(context.Background(), "hi")
	h.client.waitFor(t, "tool call", func(us []protocol.SessionUpdate) bool { return len(callUpdates(us, "c1")) > 0 })
	h.cancelAndExpect(ch)
	if st := finalStatus(h.client.snapshot(), "c1"); st != protocol.StatusFailed {
		t.Fatalf("unfinished call ended %q", st)
	}
}

func TestCancelDuringPermissionPrompt(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"))
	h.newSession()
	ch := h.promptAsync(context.Background(), "edit")
	h.client.waitPermission(t, 1)
	h.cancelAndExpect(ch)
	if st := finalStatus(h.client.snapshot(), "e1"); st != protocol.StatusFailed {
		t.Fatalf("call ended %q", st)
	}
	if got := h.ws.file(h.path("a.txt")); got != "alpha\n" {
		t.Fatalf("file changed: %q", got)
	}
}

func TestCancelDuringApplyEdit(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"))
	h.set.Mode = ModeAuto
	entered := make(chan struct{})
	h.ws.editHook = func(ctx context.Context) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	}
	h.newSession()
	ch := h.promptAsync(context.Background(), "edit")
	<-entered
	h.ws.editHook = nil
	h.cancelAndExpect(ch)
	if st := finalStatus(h.client.snapshot(), "e1"); st != protocol.StatusFailed {
		t.Fatalf("call ended %q", st)
	}
	if got := h.ws.file(h.path("a.txt")); got != "alpha\n" {
		t.Fatalf("half-applied: %q", got)
	}
}

func TestCancelAnswersEvenWhenAToolIgnoresIt(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"))
	h.set.Mode = ModeAuto
	entered := make(chan struct{})
	release := make(chan struct{})
	h.ws.editHook = func(ctx context.Context) error {
		close(entered)
		<-release // an editor that never answers the cancel
		return ctx.Err()
	}
	h.newSession()
	ch := h.promptAsync(context.Background(), "edit")
	<-entered
	h.m.Cancel(h.sid)
	// The edit hook is still blocked (release is closed below): the answer did not wait for it.
	if res := waitResult(t, ch, hangGuard); res.StopReason != protocol.StopCancelled {
		t.Fatalf("answered %q", res.StopReason)
	}
	close(release)
}

func TestCancelTwiceAndAfterTheTurn(t *testing.T) {
	h := newHarness(t, streamForever())
	h.newSession()
	ch := h.promptAsync(context.Background(), "hi")
	h.waitStarted()
	h.m.Cancel(h.sid)
	h.m.Cancel(h.sid)
	if res := waitResult(t, ch, hangGuard); res.StopReason != protocol.StopCancelled {
		t.Fatalf("stop %q", res.StopReason)
	}
	// After the turn ended a cancel is a no-op, and the next prompt runs normally.
	h.m.Cancel(h.sid)
	h.prov.mu.Lock()
	h.prov.replies = []reply{{events: textReply("fine")}}
	h.prov.mu.Unlock()
	if res := h.prompt("again"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	h.m.Cancel(h.sid)
}

func TestCancelledRequestContextIsACancel(t *testing.T) {
	h := newHarness(t, blockBeforeFirstToken())
	h.newSession()
	ctx, cancel := context.WithCancel(context.Background())
	ch := h.promptAsync(ctx, "hi")
	h.waitStarted()
	cancel()
	if res := waitResult(t, ch, hangGuard); res.StopReason != protocol.StopCancelled {
		t.Fatalf("stop %q", res.StopReason)
	}
}

func TestQueuedPromptsRunInOrderAndAreAnnounced(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t,
		reply{fn: func(ctx context.Context, yield func(providers.Event) bool) {
			<-gate
			for _, ev := range textReply("first") {
				yield(ev)
			}
		}},
		reply{events: textReply("second")},
		reply{events: textReply("third")},
	)
	h.newSession()
	ch1 := h.promptAsync(context.Background(), "one")
	h.waitStarted()
	ch2 := h.promptAsync(context.Background(), "two")
	waitQueued(t, h, 1)
	ch3 := h.promptAsync(context.Background(), "three")
	waitQueued(t, h, 2)
	close(gate)
	for i, ch := range []<-chan protocol.PromptResult{ch1, ch2, ch3} {
		if res := waitResult(t, ch, hangGuard); res.StopReason != protocol.StopEndTurn {
			t.Fatalf("prompt %d: %q", i+1, res.StopReason)
		}
	}
	ums := kinds(h.client.snapshot(), protocol.UpdateUserMessageChunk)
	if len(ums) != 2 || ums[0].Content.Text != "two" || ums[1].Content.Text != "three" {
		t.Fatalf("queued prompts announced: %s", dumpUpdates(ums))
	}
	// Each turn saw the previous one's answer: FIFO.
	reqs := h.prov.requests()
	last := reqs[len(reqs)-1].Messages
	if len(last) != 5 || last[2].Parts[0].Text != "two" || last[4].Parts[0].Text != "three" {
		t.Fatalf("history order: %+v", last)
	}
}

func TestCancelDoesNotStartTheQueue(t *testing.T) {
	h := newHarness(t, streamForever(), reply{events: textReply("should not run")})
	h.newSession()
	ch1 := h.promptAsync(context.Background(), "one")
	h.waitStarted()
	ch2 := h.promptAsync(context.Background(), "two")
	waitQueued(t, h, 1)
	h.m.Cancel(h.sid)
	for _, ch := range []<-chan protocol.PromptResult{ch1, ch2} {
		if res := waitResult(t, ch, hangGuard); res.StopReason != protocol.StopCancelled {
			t.Fatalf("stop %q", res.StopReason)
		}
	}
	if n := len(h.prov.requests()); n != 1 {
		t.Fatalf("the queued prompt ran after cancel (%d model calls)", n)
	}
}

func waitQueued(t *testing.T, h *harness, n int) {
	t.Helper()
	s, _ := h.m.get(h.sid)
	deadline := time.Now().Add(hangGuard)
	for {
		s.mu.Lock()
		q := len(s.queue)
		s.mu.Unlock()
		if q >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue length %d, want %d", q, n)
		}
		time.Sleep(time.Millisecond) // polling a condition with a deadline, not synchronizing by sleep
	}
}

func TestShutdownEndsRunningTurns(t *testing.T) {
	h := newHarness(t, streamForever())
	h.newSession()
	ch := h.promptAsync(context.Background(), "hi")
	h.waitStarted()
	if err := h.m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res := waitResult(t, ch, hangGuard); res.StopReason != protocol.StopCancelled {
		t.Fatalf("stop %q", res.StopReason)
	}
	if _, err := h.m.New(context.Background(), protocol.SessionNewParams{Cwd: h.dir}); err == nil {
		t.Fatal("new session after shutdown")
	}
}
