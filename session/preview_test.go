package session

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

// steppingClock returns a clock that moves on by step at each reading, so a stream of n deltas
// lasts n steps whatever the machine's speed.
func steppingClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	t := time.Unix(0, 0)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(step)
		return t
	}
}

// streamedCall scripts one call whose arguments arrive in chunks of n bytes.
func streamedCall(id, name, args string, n int) []providers.Event {
	evs := []providers.Event{{Type: providers.EventToolCallStarted, ToolCallID: id, ToolName: name}}
	for rest := args; len(rest) > 0; {
		k := min(n, len(rest))
		evs = append(evs, providers.Event{Type: providers.EventToolCallArgsDelta, ToolCallID: id, Text: rest[:k]})
		rest = rest[k:]
	}
	return append(evs,
		providers.Event{Type: providers.EventToolCallCompleted, ToolCallID: id, ToolName: name},
		providers.Event{Type: providers.EventCompleted, StopReason: providers.StopToolUse})
}

// TestStreamedArgumentsCostAtMostThreeTimesTheirSize streams a 64 KB argument at 4 KB/s (the
// case that cost 13 MB of notifications) and at 16 B/s, and counts the bytes of every update
// that carries the call's arguments: previews while they stream, the whole value at the end.
func TestStreamedArgumentsCostAtMostThreeTimesTheirSize(t *testing.T) {
	content := strings.Repeat("line \"quoted\" \\ é and more text\n", 2048)
	enc, _ := json.Marshal(content)
	args := `{"path":"a.txt","pad":` + string(enc) + `}`
	for _, speed := range []struct {
		chunk    int
		every    time.Duration
		previews bool // a stream over before the first preview is due has none
	}{{160, 40 * time.Millisecond, true}, {16, time.Second, true}, {4096, time.Millisecond, false}} {
		t.Run(fmt.Sprintf("%dB every %v", speed.chunk, speed.every), func(t *testing.T) {
			h := newHarness(t, reply{events: streamedCall("c1", "read_file", args, speed.chunk)}, reply{events: textReply("ok")})
			h.m.now = steppingClock(speed.every)
			h.newSession()
			h.prompt("go")
			sent, previews, whole := 0, 0, 0
			lastBytes := 0
			for _, u := range callUpdates(h.client.snapshot(), "c1") {
				p, isPreview := u.Meta[metaArgsPreview].(map[string]any)
				if len(u.RawInput) == 0 && !isPreview {
					continue
				}
				b, _ := json.Marshal(u)
				sent += len(b)
				if !isPreview {
					whole++
					if string(u.RawInput) != args {
						t.Errorf("the final rawInput is not the whole arguments (%d bytes)", len(u.RawInput))
					}
					continue
				}
				previews++
				n := int(p["bytes"].(float64))
				if n <= lastBytes || n > len(args) {
					t.Errorf("preview bytes %d after %d (of %d)", n, lastBytes, len(args))
				}
				lastBytes = n
				head, _ := p["head"].(string)
				tail, _ := p["tail"].(string)
				if n > 2*previewEdge {
					if len(u.RawInput) != 0 || len(head) > previewEdge || len(tail) > previewEdge || !strings.HasPrefix(args, head) || !utf8.ValidString(tail) || !strings.Contains(args[n-previewEdge-utf8.UTFMax:n], tail) {
						t.Errorf("preview of %d bytes: rawInput %d bytes, head %q, tail %q", n, len(u.RawInput), head, tail)
					}
				}
			}
			if whole != 1 || (previews > 0) != speed.previews {
				t.Errorf("%d whole values and %d previews sent, want 1 and previews %v", whole, previews, speed.previews)
			}
			if sent > 3*len(args) {
				t.Errorf("%d bytes sent for a %d-byte argument (%d previews), more than 3×", sent, len(args), previews)
			}
			t.Logf("%d bytes sent for a %d-byte argument in %d previews", sent, len(args), previews)
		})
	}
}

func TestSmallArgumentsPreviewAsRawInput(t *testing.T) {
	args := `{"path":"a.txt"}`
	h := newHarness(t, reply{events: streamedCall("c1", "read_file", args, 4)}, reply{events: textReply("ok")})
	h.m.now = steppingClock(time.Second)
	h.newSession()
	h.prompt("go")
	us := callUpdates(h.client.snapshot(), "c1")
	var first *protocol.SessionUpdate
	for i := range us {
		if _, ok := us[i].Meta[metaArgsPreview]; ok {
			first = &us[i]
			break
		}
	}
	if first == nil || !json.Valid(first.RawInput) || !strings.HasPrefix(args, strings.TrimSuffix(string(first.RawInput), `"}`)) {
		t.Fatalf("no small preview with a closed rawInput: %s", dumpUpdates(us))
	}
}
