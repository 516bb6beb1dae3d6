package texttools

import (
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/providertest"
)

// benchDeltas is a local model's reply as a server streams it: about a token a delta, prose with
// inline code and a `<` or two, then three calls written the way Qwen2.5-Coder writes them (one
// fenced), each split into token-sized pieces.
func benchDeltas() []string {
	var text strings.Builder
	for i := range 200 {
		text.WriteString("The function `sum` adds a < b items; ")
		if i%50 == 49 {
			text.WriteString("\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/main.go\", \"start_line\": 10}}\n</tool_call>\n")
		}
	}
	text.WriteString("```json\n<tool_call>{'name': 'search_text', 'arguments': {'pattern': 'func sum',}}</tool_call>\n```\n")
	s := text.String()
	var out []string
	for len(s) > 0 {
		n := min(4, len(s))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// BenchmarkExtractorPerDelta is the extractor's cost per streamed delta (budget ≤ 1 µs on top of
// the dialect's decode; docs/benchmarks.md).
func BenchmarkExtractorPerDelta(b *testing.B) {
	deltas := benchDeltas()
	var buf []Piece
	providertest.BenchPerDelta(b, len(deltas), func() {
		var x Extractor
		for _, d := range deltas {
			buf = x.Feed(d, buf[:0])
		}
		buf = x.Flush(buf[:0])
	})
}

// BenchmarkEventsPerDelta is the same through Events, the adapter the loop ranges over: the
// extractor plus the iterator and the events it yields.
func BenchmarkEventsPerDelta(b *testing.B) {
	deltas := benchDeltas()
	evs := make([]providers.Event, 0, len(deltas)+1)
	for _, d := range deltas {
		evs = append(evs, providers.Event{Type: providers.EventTextDelta, Text: d})
	}
	evs = append(evs, providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
	src := func(yield func(providers.Event) bool) {
		for _, ev := range evs {
			if !yield(ev) {
				return
			}
		}
	}
	invalid := func(c Call) string { return c.Err }
	providertest.BenchPerDelta(b, len(deltas), func() {
		for range Events(src, "call", invalid) {
		}
	})
}
