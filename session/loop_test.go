package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

func TestTextTurnStreamsChunksAndUsage(t *testing.T) {
	h := newHarness(t, reply{events: append([]providers.Event{
		{Type: providers.EventThinkingDelta, Text: "hmm"},
		{Type: providers.EventThinkingDelta, Signature: "sig1"},
	}, textReply("Hello there, world")...)})
	h.newSession()
	res := h.prompt("hi")
	if res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
	if res.Usage == nil || res.Usage.InputTokens != 100 || res.Usage.OutputTokens != 10 || res.Usage.TotalTokens != 110 {
		t.Fatalf("usage = %+v", res.Usage)
	}
	us := h.client.snapshot()
	var text string
	for _, u := range kinds(us, protocol.UpdateAgentMessageChunk) {
		text += u.Content.Text
	}
	if text != "Hello there, world" {
		t.Fatalf("streamed text = %q", text)
	}
	if th := kinds(us, protocol.UpdateAgentThoughtChunk); len(th) != 1 || th[0].Content.Text != "hmm" {
		t.Fatalf("thoughts = %s", dumpUpdates(th))
	}
	uu := kinds(us, protocol.UpdateUsageUpdate)
	if len(uu) != 1 || *uu[0].Used != 110 || *uu[0].Size != defaultContextWindow {
		t.Fatalf("usage updates = %s", dumpUpdates(uu))
	}
	// The system prompt grounds the agent and the live context follows it.
	req := h.prov.requests()[0]
	if !strings.Contains(req.System, "You are agentd") || !strings.Contains(req.System, "read_file") {
		t.Fatalf("system prompt: %q", req.System)
	}
	if live := liveOf(req); !strings.Contains(live, "Permission mode: ask") || !strings.Contains(live, h.dir) {
		t.Fatalf("context: %q", live)
	}
	if req.MaxTokens != config.Defaults().MaxTokens || req.Model != "fake-model" {
		t.Fatalf("request bounds: %d %q", req.MaxTokens, req.Model)
	}
	// A title arrives after the first exchange.
	h.client.waitFor(t, "session title", func(us []protocol.SessionUpdate) bool {
		s := kinds(us, protocol.UpdateSessionInfoUpdate)
		return len(s) == 1 && s[0].SessionTitle == "Test title"
	})
	// The thinking signature is kept in the history for the next request.
	h.prov.mu.Lock()
	h.prov.replies = append(h.prov.replies, reply{events: textReply("again")})
	h.prov.mu.Unlock()
	h.prompt("more")
	msgs := h.prov.requests()[1].Messages
	if len(msgs) != 3 || msgs[1].Parts[0].Type != providers.PartThinking || msgs[1].Parts[0].Signature != "sig1" || msgs[1].Parts[1].Text != "Hello there, world" {
		b, _ := json.Marshal(msgs)
		t.Fatalf("history sent: %s", b)
	}
}

func TestReadThenTextLifecycle(t *testing.T) {
	h := newHarness(t,
		reply{events: callsReply(tc{"c1", "read_file", `{"path":"a.txt"}`})},
		reply{events: textReply("It says alpha.")},
	)
	h.newSession()
	res := h.prompt("what is in a.txt?")
	if res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
	us := callUpdates(h.client.snapshot(), "c1")
	if len(us) < 4 {
		t.Fatalf("tool call updates: %s", dumpUpdates(us))
	}
	if us[0].SessionUpdate != protocol.UpdateToolCall || us[0].Status != protocol.StatusPending || us[0].Kind != protocol.KindRead {
		t.Fatalf("first update: %s", dumpUpdates(us[:1]))
	}
	var sawTitle, sawInProgress bool
	for _, u := range us {
		sawTitle = sawTitle || u.Title == "Read a.txt"
		sawInProgress = sawInProgress || u.Status == protocol.StatusInProgress
	}
	last := us[len(us)-1]
	if !sawTitle || !sawInProgress || last.Status != protocol.StatusCompleted || last.ToolContent[0].Content.Text != "alpha\n" || last.Locations[0].Path != h.path("a.txt") {
		t.Fatalf("updates: %s", dumpUpdates(us))
	}
	if got := kinds(h.client.snapshot(), protocol.UpdateUsageUpdate); len(got) != 2 {
		t.Fatalf("want a usage_update per model call, got %d", len(got))
	}
	reqs := h.prov.requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d", len(reqs))
	}
	trs := toolResults(reqs[1].Messages)
	if len(trs) != 1 || trs[0].ToolCallID != "c1" || trs[0].Text != "alpha\n" || trs[0].IsError {
		t.Fatalf("tool results sent: %+v", trs)
	}
}

// The eight reads of one response are all outstanding at once: each waits until all have
// started, which a sequential or narrower runner never reaches. The assertion is that overlap,
// not a wall time, so a loaded machine cannot fail it. The results keep the model's order.
func TestReadsRunConcurrentlyAndResultsKeepOrder(t *testing.T) {
	const reads = 8
	var calls []tc
	for i := range reads {
		name := "a.txt"
		if i%2 == 1 {
			name = "b.txt"
		}
		calls = append(calls, tc{fmt.Sprintf("r%d", i), "read_file", fmt.Sprintf(`{"path":%q}`, name)})
	}
	h := newHarness(t, reply{events: callsReply(calls...)}, reply{events: textReply("done")})
	var (
		mu          sync.Mutex
		outstanding int
		peak        int
		allIn       = make(chan struct{})
	)
	// A hang guard only: it turns a runner that never overlaps the reads into failed reads
	// instead of a stuck test; it decides nothing on a working runner.
	guard, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	h.ws.readHook = func(ctx context.Context) error {
		mu.Lock()
		outstanding++
		peak = max(peak, outstanding)
		if outstanding == reads {
			close(allIn)
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			outstanding--
			mu.Unlock()
		}()
		select {
		case <-allIn:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-guard.Done():
			return errors.New("not every read was outstanding at once")
		}
	}
	h.newSession()
	h.prompt("read")
	if peak != reads {
		t.Fatalf("at most %d of %d reads were outstanding at once; they did not run concurrently", peak, reads)
	}
	trs := toolResults(h.prov.requests()[1].Messages)
	if len(trs) != reads {
		t.Fatalf("%d results, want %d", len(trs), reads)
	}
	for i, r := range trs {
		want := "alpha\n"
		if i%2 == 1 {
			want = "bravo\n"
		}
		if r.ToolCallID != fmt.Sprintf("r%d", i) || r.Text != want {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
}

func TestMutatingCallsRunAfterReadsInOrder(t *testing.T) {
	h := newHarness(t,
		reply{events: callsReply(
			tc{"e1", "edit_file", `{"path":"a.txt","old":"alpha","new":"ALPHA"}`},
			tc{"r1", "read_file", `{"path":"a.txt"}`},
			tc{"e2", "edit_file", `{"path":"a.txt","old":"ALPHA","new":"omega"}`},
		)},
		reply{events: textReply("done")},
	)
	h.set.Mode = ModeAuto
	h.newSession()
	h.prompt("edit")
	// The read ran before the edits (it saw the original text), and the edits in order.
	trs := toolResults(h.prov.requests()[1].Messages)
	if len(trs) != 3 || trs[0].ToolCallID != "e1" || trs[1].ToolCallID != "r1" || trs[2].ToolCallID != "e2" {
		t.Fatalf("results out of the model's order: %+v", trs)
	}
	if trs[1].Text != "alpha\n" || trs[0].IsError || trs[2].IsError {
		t.Fatalf("results: %+v", trs)
	}
	if got := h.ws.file(h.path("a.txt")); got != "omega\n" {
		t.Fatalf("file = %q", got)
	}
	// auto shows each applied edit as a diff.
	last := callUpdates(h.client.snapshot(), "e1")
	d := last[len(last)-1].ToolContent[0]
	if d.Type != "diff" || *d.OldText != "alpha\n" || *d.NewText != "ALPHA\n" || d.Path != h.path("a.txt") {
		t.Fatalf("diff content: %+v", d)
	}
}

func TestBadCallsBecomeErrorResults(t *testing.T) {
	huge := `{"path":"` + strings.Repeat("x", maxArgsBytes) + `"}`
	h := newHarness(t,
		reply{events: callsReply(
			tc{"u1", "no_such_tool", `{}`},
			tc{"m1", "read_file", `{"path": "a.txt"`},
			tc{"n1", "", `{}`},
			tc{"p1", "explode", `{}`},
			tc{"h1", "read_file", huge},
			tc{"s1", "read_file", `"a string"`},
		)},
		reply{events: textReply("sorry")},
	)
	h.newSession()
	res := h.prompt("go")
	if res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
	trs := toolResults(h.prov.requests()[1].Messages)
	if len(trs) != 6 {
		t.Fatalf("results: %+v", trs)
	}
	wants := []string{"no tool named", "not valid JSON", "no tool name", "crashed", "exceed", "JSON object"}
	for i, r := range trs {
		if !r.IsError || !strings.Contains(r.Text, wants[i]) {
			t.Errorf("result %d = %q, want an error containing %q", i, clip.String(r.Text, 200, ""), wants[i])
		}
	}
	us := h.client.snapshot()
	for _, id := range []string{"u1", "m1", "n1", "p1", "h1", "s1"} {
		if st := finalStatus(us, id); st != protocol.StatusFailed {
			t.Errorf("call %s ended %q", id, st)
		}
	}
	if n := len(kinds(us, protocol.UpdateNotice)); n < 5 {
		t.Errorf("want a notice per bad call, got %d", n)
	}
	// Every assistant tool call part carries valid JSON arguments for the next request.
	for _, m := range h.prov.requests()[1].Messages {
		for _, p := range m.Parts {
			if p.Type == providers.PartToolCall && !json.Valid(p.Args) {
				t.Errorf("call %s sent with invalid args", p.ToolCallID)
			}
		}
	}
}

func TestMaxIterationsAndMaxTokens(t *testing.T) {
	var rs []reply
	for range 3 {
		rs = append(rs, reply{events: callsReply(tc{"", "read_file", `{"path":"a.txt"}`})})
	}
	h := newHarness(t, rs...)
	h.set.MaxIterations = 3
	h.newSession()
	if res := h.prompt("loop"); res.StopReason != protocol.StopMaxTurnRequests {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
	if n := len(h.prov.requests()); n != 3 {
		t.Fatalf("model calls = %d", n)
	}

	// A cut response is told so once and may go on; a second cut ends the turn with max_tokens.
	cut := reply{events: []providers.Event{
		{Type: providers.EventTextDelta, Text: "cut"},
		{Type: providers.EventCompleted, StopReason: providers.StopMaxTokens},
	}}
	h2 := newHarness(t, cut, cut)
	h2.newSession()
	if res := h2.prompt("long"); res.StopReason != protocol.StopMaxTokens {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
	if n := len(h2.prov.requests()); n != 2 {
		t.Fatalf("model calls = %d", n)
	}
}

func TestProviderFailureAnswersWithErrorMeta(t *testing.T) {
	h := newHarness(t, reply{events: []providers.Event{
		{Type: providers.EventNotice, Text: "rate limited, retrying in 1 s"},
		{Type: providers.EventFailed, Err: &providers.Error{Kind: providers.ErrRateLimit, Message: "Rate limited.", RetryAfter: 8 * time.Second}},
	}})
	h.newSession()
	res := h.prompt("hi")
	meta, ok := res.Meta["agentd/error"].(protocol.ErrorMeta)
	if res.StopReason != protocol.StopEndTurn || !ok || meta.Kind != "rate_limit" || meta.RetryAfterMs != 8000 {
		t.Fatalf("result = %+v", res)
	}
	ns := kinds(h.client.snapshot(), protocol.UpdateNotice)
	if len(ns) != 2 || ns[0].NoticeTitle != "rate limited, retrying in 1 s" || ns[1].Severity != protocol.SeverityError {
		t.Fatalf("notices: %s", dumpUpdates(ns))
	}

	h2 := newHarness(t)
	h2.m.d.Providers = fakeSource{err: &providers.Error{Kind: providers.ErrAuth, Message: "No API key."}}
	h2.newSession()
	res = h2.prompt("hi")
	if meta, ok := res.Meta["agentd/error"].(protocol.ErrorMeta); !ok || meta.Kind != "auth" {
		t.Fatalf("result = %+v", res)
	}
	h3 := newHarness(t)
	h3.m.d.Providers = fakeSource{err: errors.New("no provider configured")}
	h3.newSession()
	if res := h3.prompt("hi"); res.Meta["agentd/error"] == nil {
		t.Fatalf("result = %+v", res)
	}
}

func TestPartialArgsStreamAsValidRawInput(t *testing.T) {
	cases := map[string]string{
		`{"path": "a.g`:         `{"path": "a.g"}`,
		`{"a":1,`:               `{"a":1}`,
		`{"a":[1,2`:             `{"a":[1,2]}`,
		`{"a":"x\`:              `{"a":"x"}`,
		`{"a":{"b":"c"}, "d":"`: `{"a":{"b":"c"}, "d":""}`,
	}
	for in, want := range cases {
		if got := string(closeJSON([]byte(in))); got != want {
			t.Errorf("closeJSON(%q) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{`{"path"`, `{"path":`, `{"a": tr`} {
		if got := closeJSON([]byte(in)); got != nil {
			t.Errorf("closeJSON(%q) = %q, want nil", in, got)
		}
	}
}

func TestUnknownSessionAndBadParams(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if _, err := h.m.Prompt(ctx, protocol.PromptParams{SessionID: "nope", Prompt: []protocol.ContentBlock{protocol.TextBlock("x")}}); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("err = %v", err)
	}
	var pe *ParamError
	if _, err := h.m.New(ctx, protocol.SessionNewParams{Cwd: "relative"}); !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	h.newSession()
	if _, err := h.m.Prompt(ctx, protocol.PromptParams{SessionID: h.sid}); !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	if _, err := h.m.SetConfigOption(ctx, protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "mode", Value: "yolo"}); !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	if err := h.m.Close(ctx, "nope"); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("err = %v", err)
	}
}

func TestSystemPromptIsStableAndContextIsLive(t *testing.T) {
	h := newHarness(t, reply{events: textReply("a")}, reply{events: textReply("b")})
	h.newSession()
	h.prompt("one")
	if _, err := h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "mode", Value: ModePlan}); err != nil {
		t.Fatal(err)
	}
	h.ws.mu.Lock()
	h.ws.dirty = map[string]bool{h.path("b.txt"): true}
	h.ws.mu.Unlock()
	h.prompt("two")
	reqs := h.prov.requests()
	if reqs[0].System != reqs[1].System {
		t.Fatal("the system prompt changed between turns; provider caches would miss")
	}
	if live := liveOf(reqs[1]); !strings.Contains(live, "Permission mode: plan") || !strings.Contains(live, h.path("b.txt")) {
		t.Fatalf("live context: %q", live)
	}
	// The first request's messages, reminder included, are the second's prefix unchanged.
	a, _ := json.Marshal(reqs[0].Messages)
	b, _ := json.Marshal(reqs[1].Messages[:len(reqs[0].Messages)])
	if string(a) != string(b) {
		t.Fatalf("the history in front of the newest message was rewritten:\n%s\n%s", a, b)
	}
}

func TestThoughtLevelSetsTheReasoningBudget(t *testing.T) {
	h := newHarness(t, reply{events: textReply("a")}, reply{events: textReply("b")})
	h.newSession()
	for _, o := range h.m.sessions[h.sid].configOptions() {
		if o.ID == "thought_level" {
			t.Fatal("thought_level offered while thinking is disabled")
		}
	}
	h.set.Thinking.Enabled = true
	res, err := h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "thought_level", Value: "high"})
	if err != nil || len(res.ConfigOptions) != 3 || res.ConfigOptions[2].CurrentValue != "high" {
		t.Fatalf("options %+v, %v", res.ConfigOptions, err)
	}
	h.prompt("think hard")
	h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "thought_level", Value: "off"})
	h.prompt("quick")
	reqs := h.prov.requests()
	if !reqs[0].Thinking.Enabled || reqs[0].Thinking.BudgetTokens != 16384 || reqs[1].Thinking.Enabled {
		t.Fatalf("thinking: %+v then %+v", reqs[0].Thinking, reqs[1].Thinking)
	}
}

// A dialect drops a malformed call with a notice that names it (providers/openai does for a call
// with no name or arguments that are not an object); the call fails with that reason.
func TestDroppedCallFailsWithTheDialectsReason(t *testing.T) {
	h := newHarness(t,
		reply{events: []providers.Event{
			{Type: providers.EventToolCallStarted, Index: 0, ToolCallID: "d1", ToolName: "read_file"},
			{Type: providers.EventToolCallArgsDelta, Index: 0, ToolCallID: "d1", Text: `[1,2`},
			{Type: providers.EventNotice, Index: 0, ToolCallID: "d1", ToolName: "read_file", Text: "dropped tool call read_file (d1): its arguments are not a JSON object"},
			{Type: providers.EventCompleted, StopReason: providers.StopToolUse},
		}},
		reply{events: textReply("ok")},
	)
	h.newSession()
	if res := h.prompt("go"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
	trs := toolResults(h.prov.requests()[1].Messages)
	if len(trs) != 1 || !trs[0].IsError || !strings.Contains(trs[0].Text, "not a JSON object") {
		t.Fatalf("results: %+v", trs)
	}
	if st := finalStatus(h.client.snapshot(), "d1"); st != protocol.StatusFailed {
		t.Fatalf("call ended %q", st)
	}
}

// The engine admits the arguments the tools' schemas allow: create_file takes up to 8 MiB of
// content, so a call of a few MiB reaches its tool instead of being refused on the way.
func TestArgumentsUpToTheToolsLimitReachTheTool(t *testing.T) {
	big := `{"path":"a.txt","pad":"` + strings.Repeat("x", 6<<20) + `"}`
	h := newHarness(t, reply{events: callsReply(tc{"r1", "read_file", big})}, reply{events: textReply("ok")})
	h.newSession()
	h.prompt("go")
	trs := toolResults(h.prov.requests()[1].Messages)
	if len(trs) != 1 || trs[0].IsError || trs[0].Text != "alpha\n" {
		t.Fatalf("results: %q", clip.String(fmt.Sprint(trs), 300, ""))
	}
}
