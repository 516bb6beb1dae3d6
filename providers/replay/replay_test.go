package replay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
)

func collect(t *testing.T, p providers.Provider, ctx context.Context, req *providers.Request) []providers.Event {
	t.Helper()
	var evs []providers.Event
	for ev := range p.Stream(ctx, req) {
		evs = append(evs, ev)
	}
	if n := len(evs); n == 0 || (evs[n-1].Type != providers.EventCompleted && evs[n-1].Type != providers.EventFailed) {
		t.Fatalf("stream did not end with one terminal event: %+v", evs)
	}
	for _, ev := range evs[:len(evs)-1] {
		if ev.Type == providers.EventCompleted || ev.Type == providers.EventFailed {
			t.Fatalf("terminal event before the end: %+v", evs)
		}
	}
	return evs
}

var toolReq = &providers.Request{Context: "Permission mode: ask\nWorking directory: /tmp/pro ject\n", Tools: []providers.ToolSpec{{Name: "read_file"}}}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlaysResponsesInOrder(t *testing.T) {
	path := writeScript(t, `{"title":"Fix sum","responses":[
	  {"thinking":"Let me look at the file first.","toolCalls":[{"id":"c1","name":"read_file","args":{"path":"{{cwd}}/sum.go"}}]},
	  {"text":"The loop stops one element early; I fixed it.","usage":{"input":900,"output":40}},
	  {"error":{"kind":"rate_limit","message":"Slow down."}}
	]}`)
	reg := providers.NewRegistry()
	reg.Register(Dialect)
	cfg := providers.Config{ID: "r", APIType: APIType, BaseURL: "file://" + path}
	p, err := reg.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, p, context.Background(), toolReq)
	var thinking, args string
	var sig bool
	var completed providers.Event
	for _, ev := range evs {
		switch ev.Type {
		case providers.EventThinkingDelta:
			thinking += ev.Text
			sig = sig || ev.Signature != ""
		case providers.EventToolCallArgsDelta:
			args += ev.Text
		case providers.EventToolCallCompleted:
			completed = ev
		}
	}
	if thinking != "Let me look at the file first." || !sig {
		t.Fatalf("thinking %q signature %v", thinking, sig)
	}
	var a struct{ Path string }
	if err := json.Unmarshal(completed.Args, &a); err != nil || a.Path != "/tmp/pro ject/sum.go" || args != string(completed.Args) || completed.ToolName != "read_file" || !strings.HasPrefix(completed.ToolCallID, "c1") {
		t.Fatalf("tool call %+v (streamed %q)", completed, args)
	}
	if last := evs[len(evs)-1]; last.StopReason != providers.StopToolUse {
		t.Fatalf("stop %q", last.StopReason)
	}

	// The registry's provider for the same configuration continues where the first call stopped;
	// a provider of its own starts from the top.
	if fresh, _ := New(cfg); fresh.(*Provider).cur.next != 0 {
		t.Fatal("a new provider does not start at the first response")
	}
	p2, _ := reg.New(cfg)
	evs = collect(t, p2, context.Background(), toolReq)
	var text string
	var usage providers.Usage
	for _, ev := range evs {
		if ev.Type == providers.EventTextDelta {
			text += ev.Text
			if len(ev.Text) > 12 {
				t.Fatalf("delta %q is not a small chunk", ev.Text)
			}
		}
		if ev.Type == providers.EventUsage {
			usage = ev.Usage
		}
	}
	if text != "The loop stops one element early; I fixed it." || usage.Input != 900 || evs[len(evs)-1].StopReason != providers.StopEndTurn {
		t.Fatalf("text %q usage %+v", text, usage)
	}
	evs = collect(t, p, context.Background(), toolReq)
	if last := evs[len(evs)-1]; last.Type != providers.EventFailed || last.Err.Kind != providers.ErrRateLimit {
		t.Fatalf("want a rate_limit failure, got %+v", last)
	}
	evs = collect(t, p, context.Background(), toolReq)
	if evs[0].Text == "" || !strings.Contains(joinText(evs), "no more responses") {
		t.Fatalf("exhausted script: %+v", evs)
	}
	// Tool-less requests (titles) do not use up responses.
	evs = collect(t, p, context.Background(), &providers.Request{System: "Answer with a title"})
	if joinText(evs) != "Fix sum" {
		t.Fatalf("title %q", joinText(evs))
	}
}

func joinText(evs []providers.Event) string {
	var s string
	for _, ev := range evs {
		if ev.Type == providers.EventTextDelta {
			s += ev.Text
		}
	}
	return s
}

func TestJSONLScript(t *testing.T) {
	path := writeScript(t, "{\"title\":\"T\"}\n{\"text\":\"one\"}\n\n{\"text\":\"two\"}\n")
	s, err := Load(path)
	if err != nil || s.Title != "T" || len(s.Responses) != 2 || s.Responses[1].Text != "two" {
		t.Fatalf("script %+v, %v", s, err)
	}
	if _, err := Load(writeScript(t, "{\"text\":\"one\"}\n{bad\n")); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Fatalf("bad line error = %v", err)
	}
}

func TestCancelStopsTheStream(t *testing.T) {
	p := NewFromScript(&Script{ChunkDelayMs: 20, Responses: []Response{{Text: strings.Repeat("word ", 200)}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	for ev := range p.Stream(ctx, toolReq) {
		if ev.Type == providers.EventTextDelta {
			n++
			if n == 2 {
				cancel()
			}
		}
	}
	// Counted, not timed: the script has 200 deltas, a stream that ignored the cancel goes on.
	if n > 3 {
		t.Fatalf("stream went on after cancel: %d deltas", n)
	}
}
