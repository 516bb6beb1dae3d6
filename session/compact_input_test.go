package session

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
)

// history2MB is a 2 MB task: the user's goal, then 60 steps of a read_file of a 30 KB file and
// a long explanation, one create_file with 120 KB of arguments, and a last question.
func history2MB() []providers.Message {
	text := func(role providers.Role, s string) providers.Message {
		return providers.Message{Role: role, Parts: []providers.Part{{Type: providers.PartText, Text: s}}}
	}
	hist := []providers.Message{text(providers.RoleUser, "GOAL: make the parser fast")}
	for i := range 60 {
		id := fmt.Sprintf("call_%d", i)
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("f%d.go", i)})
		if i == 30 {
			args, _ = json.Marshal(map[string]string{"path": "big.go", "content": strings.Repeat("x", 120<<10)})
		}
		hist = append(hist,
			providers.Message{Role: providers.RoleAssistant, Parts: []providers.Part{
				{Type: providers.PartThinking, Text: strings.Repeat("hmm ", 500), Signature: "sig"},
				{Type: providers.PartToolCall, ToolCallID: id, ToolName: "read_file", Args: args}}},
			providers.Message{Role: providers.RoleUser, Parts: []providers.Part{
				{Type: providers.PartToolResult, ToolCallID: id, ToolName: "read_file", Text: strings.Repeat(fmt.Sprintf("line of f%d\n", i), 30<<10/12)}}},
			text(providers.RoleAssistant, strings.Repeat("explanation ", 300)),
			text(providers.RoleUser, fmt.Sprintf("next step %d", i)),
		)
	}
	return append(hist, text(providers.RoleAssistant, "LAST ANSWER"))
}

// checkPaired fails unless every tool result answers a call of the message just before it.
func checkPaired(t *testing.T, ms []providers.Message) {
	t.Helper()
	for i, m := range ms {
		for _, p := range m.Parts {
			if p.Type == providers.PartToolCall && !json.Valid(p.Args) {
				t.Errorf("message %d: arguments are not JSON: %.80s", i, p.Args)
			}
			if p.Type != providers.PartToolResult {
				continue
			}
			found := false
			if i > 0 {
				for _, q := range ms[i-1].Parts {
					found = found || (q.Type == providers.PartToolCall && q.ToolCallID == p.ToolCallID)
				}
			}
			if !found {
				t.Errorf("message %d: result %s without its call", i, p.ToolCallID)
			}
		}
	}
	if len(ms) > 0 && (ms[0].Role != providers.RoleUser || isToolResults(ms[0])) {
		t.Errorf("the request starts with %s", ms[0].Role)
	}
}

func TestSummaryInputFitsTheBudget(t *testing.T) {
	hist := history2MB()
	if n := messagesSize(hist); n < 2<<20 {
		t.Fatalf("history is %d bytes, want ≥ 2 MB", n)
	}
	for _, budget := range []int{1 << 30, 600 << 10, 192 << 10, 40 << 10} {
		out := summaryInput(hist, budget)
		if n := messagesSize(out); n > budget {
			t.Errorf("budget %d: %d bytes", budget, n)
		}
		checkPaired(t, out)
		if !strings.Contains(out[0].Parts[0].Text, "GOAL") {
			t.Errorf("budget %d: the user's goal was left out", budget)
		}
		if last := out[len(out)-1]; last.Parts[0].Text != "LAST ANSWER" {
			t.Errorf("budget %d: the newest message was left out", budget)
		}
		for _, m := range out {
			for _, p := range m.Parts {
				if p.Type == providers.PartThinking {
					t.Fatalf("budget %d: reasoning sent", budget)
				}
			}
		}
	}
	// The stored history is not changed.
	if hist[2].Parts[0].Type != providers.PartToolResult || len(hist[2].Parts[0].Text) != len("line of f0\n")*(30<<10/12) {
		t.Error("summaryInput changed the history it was given")
	}
	// A history that fits whole, but for old tool results, goes whole.
	small := hist[:9]
	if out := summaryInput(small, 1<<30); len(out) != len(small) {
		t.Errorf("a small history lost messages: %d of %d", len(out), len(small))
	}
}

type recordingProvider struct{ reqs []*providers.Request }

func (p *recordingProvider) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	p.reqs = append(p.reqs, req)
	return func(yield func(providers.Event) bool) {
		if yield(providers.Event{Type: providers.EventTextDelta, Text: "summary"}) {
			yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
		}
	}
}

// The summarizing request for a 2 MB history stays within half the model's context window,
// estimated cautiously at 3 bytes a token, with the configured window and with the default.
func TestSummarizeRequestWithinHalfTheWindow(t *testing.T) {
	for _, window := range []int{0, 64000} {
		p := &recordingProvider{}
		tn := &turn{s: &Session{}, ctx: context.Background(), prov: p, pcfg: providers.Config{ID: "m", Model: "m"},
			set: config.Settings{Providers: map[string]config.ProviderSettings{"m": {ContextWindow: window}}}}
		if _, err := tn.summarize(history2MB()); err != nil {
			t.Fatal(err)
		}
		req := p.reqs[0]
		want := window
		if want == 0 {
			want = defaultContextWindow
		}
		b, _ := json.Marshal(req)
		if tokens := len(b) / bytesPerToken; tokens > want/2 {
			t.Errorf("window %d: the request is ~%d tokens (%d bytes), over half the window", want, tokens, len(b))
		}
		t.Logf("window %d: a 2 MB history is summarized in a request of %d bytes", want, len(b))
		checkPaired(t, req.Messages[:len(req.Messages)-1])
	}
}
