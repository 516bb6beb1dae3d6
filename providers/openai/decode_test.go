package openai

import (
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
)

// frame is one SSE event as the transport hands it over.
type frame struct{ typ, data string }

// run drives a decoder with frames and, when eof is true and the decoder still runs, ends it.
func run(frames []frame, eof bool) []providers.Event {
	var out []providers.Event
	d := &decoder{who: "Test"}
	emit := func(ev providers.Event) bool { out = append(out, ev); return true }
	for _, f := range frames {
		if !d.event(f.typ, []byte(f.data), emit) {
			return out
		}
	}
	if eof {
		d.end(nil, emit)
	}
	return out
}

func data(ds ...string) []frame {
	out := make([]frame, len(ds))
	for i, d := range ds {
		out[i] = frame{data: d}
	}
	return out
}

// summary renders events compactly for comparison.
func summary(evs []providers.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(ev.Type.String())
		switch ev.Type {
		case providers.EventTextDelta, providers.EventThinkingDelta, providers.EventToolCallArgsDelta:
			b.WriteString("(" + ev.Text + ")")
		case providers.EventToolCallStarted:
			b.WriteString("(" + itoa(ev.Index) + " " + ev.ToolCallID + " " + ev.ToolName + ")")
		case providers.EventToolCallCompleted:
			b.WriteString("(" + itoa(ev.Index) + " " + ev.ToolCallID + " " + ev.ToolName + " " + string(ev.Args) + ")")
		case providers.EventCompleted:
			b.WriteString("(" + string(ev.StopReason) + ")")
		case providers.EventFailed:
			b.WriteString("(" + string(ev.Err.Kind) + ")")
		case providers.EventNotice:
			b.WriteString("(#" + itoa(ev.Index) + ")")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func itoa(i int) string { return string(rune('0' + i)) }

func lines(s ...string) string { return strings.Join(s, "\n") + "\n" }

func call(index int, id, name, args string) string {
	s := `{"index":` + itoa(index)
	if id != "" {
		s += `,"id":"` + id + `","type":"function"`
	}
	s += `,"function":{`
	if name != "" {
		s += `"name":"` + name + `",`
	}
	return s + `"arguments":` + args + `}}`
}

func toolChunk(calls ...string) string {
	return `{"choices":[{"index":0,"delta":{"tool_calls":[` + strings.Join(calls, ",") + `]},"finish_reason":null}]}`
}

const finishTools = `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`

func TestDecoderText(t *testing.T) {
	got := summary(run(data(
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":"lo \"you\"\n\u00e9"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}`,
		`[DONE]`,
		`{"choices":[{"index":0,"delta":{"content":"after done"}}]}`,
	), true))
	want := lines("text_delta(Hel)", "text_delta(lo \"you\"\né)", "usage", "completed(end_turn)")
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
}

func TestDecoderUsageMapping(t *testing.T) {
	evs := run(data(`{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":30,"prompt_tokens_details":{"cached_tokens":60,"cache_write_tokens":5},"completion_tokens_details":{"reasoning_tokens":20}}}`, `[DONE]`), true)
	want := providers.Usage{Input: 40, Output: 30, CacheRead: 60, CacheWrite: 5, Thinking: 20}
	if evs[0].Type != providers.EventUsage || evs[0].Usage != want {
		t.Fatalf("usage = %+v, want %+v", evs[0], want)
	}
	// DeepSeek reports cache hits at the top level.
	evs = run(data(`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1,"prompt_cache_hit_tokens":8,"prompt_cache_miss_tokens":2}}`, `[DONE]`), true)
	if want := (providers.Usage{Input: 2, Output: 1, CacheRead: 8}); evs[0].Usage != want {
		t.Fatalf("deepseek usage = %+v, want %+v", evs[0].Usage, want)
	}
}

func TestDecoderToolCallIndexStartsAtOneAndArgsOverManyChunks(t *testing.T) {
	frames := data(toolChunk(call(1, "call_a", "read_file", `""`)))
	args := `{"path": "dir/a \"quoted\".txt", "limit": 10}`
	// One byte per chunk: dozens of fragments, escapes split across them.
	for _, r := range args {
		frames = append(frames, data(toolChunk(call(1, "", "", jsonString(string(r)))))...)
	}
	frames = append(frames, data(finishTools, `[DONE]`)...)
	evs := run(frames, true)
	var deltas strings.Builder
	for _, ev := range evs {
		if ev.Type == providers.EventToolCallArgsDelta {
			if ev.Index != 0 || ev.ToolCallID != "call_a" {
				t.Fatalf("delta %+v not tied to call 0/call_a", ev)
			}
			deltas.WriteString(ev.Text)
		}
	}
	if deltas.String() != args {
		t.Fatalf("deltas = %q, want %q", deltas.String(), args)
	}
	last := evs[len(evs)-2:]
	if last[0].Type != providers.EventToolCallCompleted || string(last[0].Args) != args || last[0].Index != 0 || last[0].ToolName != "read_file" {
		t.Fatalf("completed = %+v", last[0])
	}
	if last[1].Type != providers.EventCompleted || last[1].StopReason != providers.StopToolUse {
		t.Fatalf("end = %+v", last[1])
	}
}

func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

func TestDecoderMissingIDIsSynthesizedAndDistinct(t *testing.T) {
	evs := run(data(
		toolChunk(call(0, "", "a", `"{}"`)),
		toolChunk(call(1, "", "b", `"{\"x\":1}"`)),
		finishTools, `[DONE]`), true)
	var ids []string
	for _, ev := range evs {
		if ev.Type == providers.EventToolCallCompleted {
			ids = append(ids, ev.ToolCallID)
		}
	}
	if len(ids) != 2 || ids[0] == ids[1] || !strings.HasPrefix(ids[0], "call_") || !strings.HasPrefix(ids[1], "call_") {
		t.Fatalf("ids = %q, want two distinct synthesized ids", ids)
	}
}

func TestDecoderWholeArgsAndObjectArgs(t *testing.T) {
	got := summary(run(data(
		toolChunk(call(0, "c1", "run", `"{\"command\":\"ls\"}"`)),
		// Some servers send the arguments as an object rather than a string.
		toolChunk(call(1, "c2", "run", `{"command":"pwd"}`)),
		// A tool without parameters: empty arguments become {}.
		toolChunk(call(2, "c3", "now", `""`)),
		finishTools, `[DONE]`), true))
	want := lines(
		"tool_call_started(0 c1 run)", `tool_call_args_delta({"command":"ls"})`,
		"tool_call_started(1 c2 run)", `tool_call_args_delta({"command":"pwd"})`,
		"tool_call_started(2 c3 now)",
		`tool_call_completed(0 c1 run {"command":"ls"})`,
		`tool_call_completed(1 c2 run {"command":"pwd"})`,
		`tool_call_completed(2 c3 now {})`,
		"completed(tool_use)")
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
}

func TestDecoderDropsNamelessAndInvalidCalls(t *testing.T) {
	evs := run(data(
		toolChunk(call(0, "c1", "", `"{\"a\":1}"`)),
		toolChunk(call(1, "c2", "edit", `"{\"a\":"`)),
		toolChunk(call(2, "c3", "list", `"[1,2]"`)),
		toolChunk(call(3, "c4", "ok", `"{}"`)),
		finishTools, `[DONE]`), true)
	got := summary(evs)
	want := lines(
		"tool_call_started(1 c2 edit)", `tool_call_args_delta({"a":)`,
		"tool_call_started(2 c3 list)", `tool_call_args_delta([1,2])`,
		"tool_call_started(3 c4 ok)", `tool_call_args_delta({})`,
		"notice(#0)", "notice(#1)", "notice(#2)",
		"tool_call_completed(3 c4 ok {})", "completed(tool_use)")
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	for _, ev := range evs {
		if ev.Type == providers.EventNotice && (ev.ToolCallID == "" || !strings.Contains(ev.Text, "dropped")) {
			t.Fatalf("notice %+v should name the dropped call", ev)
		}
	}
}

func TestDecoderSameIndexNewIDStartsANewCall(t *testing.T) {
	got := summary(run(data(
		toolChunk(call(0, "c1", "a", `"{}"`)),
		toolChunk(call(0, "c2", "b", `"{}"`)),
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`), true))
	want := lines(
		"tool_call_started(0 c1 a)", "tool_call_args_delta({})",
		"tool_call_started(1 c2 b)", "tool_call_args_delta({})",
		"tool_call_completed(0 c1 a {})", "tool_call_completed(1 c2 b {})",
		// finish_reason "stop" after tool calls still means the model wants them run.
		"completed(tool_use)")
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
}

func TestDecoderNameAfterArgs(t *testing.T) {
	got := summary(run(data(
		toolChunk(call(0, "c1", "", `"{\"a\""`)),
		toolChunk(call(0, "", "late", `":1}"`)),
		finishTools, `[DONE]`), true))
	want := lines("tool_call_started(0 c1 late)", `tool_call_args_delta({"a":1})`, `tool_call_completed(0 c1 late {"a":1})`, "completed(tool_use)")
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
}

func TestDecoderDuplicateFinishGivesOneCompletion(t *testing.T) {
	got := summary(run(data(
		`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"length"}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
		`[DONE]`), true))
	want := lines("text_delta(x)", "usage", "completed(max_tokens)")
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
}

func TestDecoderEndings(t *testing.T) {
	tests := []struct {
		name   string
		frames []frame
		want   string
	}{
		{"finish without done completes at eof",
			data(`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}`),
			lines("text_delta(a)", "completed(end_turn)")},
		{"done without finish completes unknown",
			data(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`, `[DONE]`),
			lines("text_delta(a)", "completed(unknown)")},
		{"neither is truncated",
			data(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`),
			lines("text_delta(a)", "failed(network)")},
		{"empty body is truncated", nil, lines("failed(network)")},
		{"truncated tool call is not completed",
			data(toolChunk(call(0, "c1", "a", `"{\"x\""`))),
			lines("tool_call_started(0 c1 a)", `tool_call_args_delta({"x")`, "failed(network)")},
		{"content_filter", data(`{"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`, `[DONE]`),
			lines("completed(refusal)")},
		{"refusal", data(`{"choices":[{"index":0,"delta":{"content":null,"refusal":"No."}}]}`, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`),
			lines("text_delta(No.)", "completed(refusal)")},
		{"unknown event types are skipped",
			[]frame{{typ: "ping", data: "{}"}, {data: `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`}, {typ: "message", data: "[DONE]"}},
			lines("completed(end_turn)")},
		{"other choices are ignored",
			data(`{"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}`, `[DONE]`),
			lines("text_delta(a)", "completed(end_turn)")},
		{"whole message from a server that ignored stream:true",
			data(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"all at once"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":3}}`),
			lines("text_delta(all at once)", "usage", "completed(end_turn)")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summary(run(tt.frames, true)); got != tt.want {
				t.Fatalf("events:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestDecoderErrors(t *testing.T) {
	tests := []struct {
		name     string
		frames   []frame
		kind     providers.ErrorKind
		contains string
		status   int
	}{
		{"event error frame", []frame{{data: `{"choices":[{"index":0,"delta":{"content":"a"}}]}`},
			{typ: "error", data: `{"error":{"message":"Overloaded","type":"overloaded_error"}}`}},
			providers.ErrOverloaded, "overloaded", 0},
		{"event error frame with status", []frame{{typ: "error", data: `{"error":{"message":"bad tool","type":"invalid_request_error","code":"tool_use_failed","status_code":400}}`}},
			providers.ErrInvalidRequest, "bad tool", 400},
		{"top-level error object", data(`{"error":{"message":"Rate limit exceeded","code":429}}`),
			providers.ErrRateLimit, "rate limiting", 429},
		{"top-level error string", data(`{"error":"model crashed"}`),
			providers.ErrServer, "model crashed", 0},
		{"context overflow in stream", data(`{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`),
			providers.ErrContextOverflow, "context", 0},
		{"invalid json", data(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`, `{"choices":[{"index":0,"delta":{"content":"a`),
			providers.ErrServer, "invalid JSON", 0},
		{"not an object", data(`hello`), providers.ErrServer, "malformed", 0},
		{"bad escape", data(`{"choices":[{"index":0,"delta":{"content":"a\x"}}]}`), providers.ErrServer, "malformed", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := run(tt.frames, true)
			last := evs[len(evs)-1]
			if last.Type != providers.EventFailed {
				t.Fatalf("last event = %s, want failed; all:\n%s", last.Type, summary(evs))
			}
			if last.Err.Kind != tt.kind || !strings.Contains(strings.ToLower(last.Err.Message+" "+last.Err.Detail), strings.ToLower(tt.contains)) {
				t.Fatalf("error = %+v, want kind %s mentioning %q", last.Err, tt.kind, tt.contains)
			}
			if tt.status != 0 && last.Err.Status != tt.status {
				t.Fatalf("status = %d, want %d", last.Err.Status, tt.status)
			}
			for _, ev := range evs[:len(evs)-1] {
				if ev.Type == providers.EventFailed || ev.Type == providers.EventCompleted {
					t.Fatalf("two terminal events:\n%s", summary(evs))
				}
			}
		})
	}
}

func TestDecoderReasoningDialects(t *testing.T) {
	got := summary(run(data(
		`{"choices":[{"index":0,"delta":{"reasoning_content":"deep "}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"groq "}}]}`,
		// Both fields: the details win, so the text is not doubled.
		`{"choices":[{"index":0,"delta":{"reasoning":"router","reasoning_details":[{"type":"reasoning.text","text":"router","index":0}]}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","signature":"SIG","index":0}]}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.encrypted","data":"OPAQUE"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":null,"reasoning_details":[],"content":"answer"},"finish_reason":"stop"}]}`,
		`[DONE]`), true))
	want := lines("thinking_delta(deep )", "thinking_delta(groq )", "thinking_delta(router)", "thinking_delta()", "thinking_delta()", "text_delta(answer)", "completed(end_turn)")
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	evs := run(data(
		`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","signature":"SIG","index":0}]}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.encrypted","data":"OPAQUE"}]}}]}`), false)
	if evs[0].Signature != "SIG" || evs[1].Redacted != "OPAQUE" {
		t.Fatalf("signature/redacted lost: %+v", evs)
	}
}

// TestDecoderStopsWhenConsumerLeaves: once emit returns false nothing more is emitted.
func TestDecoderStopsWhenConsumerLeaves(t *testing.T) {
	d := &decoder{who: "Test"}
	n := 0
	emit := func(providers.Event) bool { n++; return false }
	if d.event("", []byte(`{"choices":[{"index":0,"delta":{"content":"a","reasoning_content":"r"}}]}`), emit) {
		t.Fatal("decoder went on after the consumer left")
	}
	d.event("", []byte(`{"choices":[{"index":0,"delta":{"content":"b"}}]}`), emit)
	d.end(nil, emit)
	if n != 1 {
		t.Fatalf("%d events emitted, want 1", n)
	}
}
