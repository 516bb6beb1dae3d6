package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentd-dev/agentd/providers"
)

// FuzzDecoder feeds arbitrary event data to the chunk decoder. The input is split into events at
// blank lines; an event whose first line is "event: error" is an error frame. Whatever the input,
// the decoder must not panic, must end with exactly one terminal event and nothing after it, and
// every completed tool call must have been started and carry a JSON object. The seed corpus is in
// testdata/fuzz/FuzzDecoder (streams written from the docs) plus the cases below.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		"[DONE]",
		`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`,
		`{"choices":[{"index":1,"delta":{"tool_calls":[{"index":1,"id":"a","function":{"name":"f","arguments":"{\"x\":"}}]}}]}` + "\n\n" +
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]}` + "\n\n[DONE]",
		`{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.text","text":"t","signature":"s"}],"reasoning":"t"}}]}`,
		"event: error\n" + `{"error":{"message":"m","code":"tool_use_failed","status_code":400}}`,
		`{"error":{"code":400,"message":"Token limit reached"},"usage":{"prompt_tokens":1}}`,
		`{"choices":[{"index":0,"delta":{"content":"\ud83d\ude00\u00e9\\\""}}]}`,
		`{"choices":[{"index":0,"message":{"content":"whole","tool_calls":[{"function":{"name":"f","arguments":{"a":[1,2]}}}]},"finish_reason":"stop"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"a`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		d := &decoder{who: "Fuzz"}
		var evs []providers.Event
		terminal := 0
		emit := func(ev providers.Event) bool {
			if terminal > 0 {
				t.Fatalf("event %v after the terminal event", ev.Type)
			}
			if ev.Type == providers.EventCompleted || ev.Type == providers.EventFailed {
				terminal++
			}
			evs = append(evs, ev)
			return true
		}
		for _, frame := range bytes.Split(input, []byte("\n\n")) {
			typ := ""
			if rest, ok := bytes.CutPrefix(frame, []byte("event: error\n")); ok {
				typ, frame = "error", rest
			}
			if !d.event(typ, frame, emit) {
				break
			}
		}
		d.end(nil, emit)
		if terminal != 1 {
			t.Fatalf("%d terminal events", terminal)
		}
		started := map[int]string{}
		for _, ev := range evs {
			switch ev.Type {
			case providers.EventToolCallStarted:
				if ev.ToolName == "" || ev.ToolCallID == "" {
					t.Fatalf("started without name or id: %+v", ev)
				}
				started[ev.Index] = ev.ToolCallID
			case providers.EventToolCallArgsDelta:
				if started[ev.Index] != ev.ToolCallID {
					t.Fatalf("args delta for a call not started: %+v", ev)
				}
			case providers.EventToolCallCompleted:
				if started[ev.Index] != ev.ToolCallID {
					t.Fatalf("completed a call not started: %+v", ev)
				}
				var obj map[string]any
				if err := json.Unmarshal(ev.Args, &obj); err != nil {
					t.Fatalf("completed with args that are not a JSON object: %q", ev.Args)
				}
			case providers.EventFailed:
				if ev.Err == nil || ev.Err.Message == "" {
					t.Fatalf("failed without a message: %+v", ev.Err)
				}
			}
		}
	})
}
