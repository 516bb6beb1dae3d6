package anthropic

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/agentd-dev/agentd/providers/providertest"
)

// benchStream is a recorded-style Anthropic stream (padded JSON, pings) with n text deltas and
// one tool call whose input arrives in n/4 fragments.
func benchStream(n int) (body []byte, deltas int) {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-20250514\",\"id\":\"msg_01R8GdyyLQUhUfyjqSCMbnWg\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":16,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":5}}   }\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}            }\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" word%d and\"}           }\n\n", i)
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0 }\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"edit\",\"input\":{}}}\n\n")
	b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"text\\\": \\\"\"}}\n\n")
	for i := 0; i < n/4; i++ {
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"abc def \"}    }\n\n")
	}
	b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"}\"}}\n\n")
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1 }\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":38}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return []byte(b.String()), n + n/4 + 2
}

// BenchmarkDecode measures SSE parsing plus JSON decoding plus normalization, per delta, from
// the stream's bytes (no network).
func BenchmarkDecode(b *testing.B) {
	body, deltas := benchStream(1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	providertest.BenchPerDelta(b, deltas, func() {
		var stop providers.StopReason
		em := providers.NewEmitter(func(ev providers.Event) bool {
			if ev.Type == providers.EventCompleted {
				stop = ev.StopReason
			}
			return true
		})
		d := decoder{em: em}
		for ev, err := range httpsse.ReadEvents(bytes.NewReader(body), 0) {
			if err != nil || !d.event(ev.Type, ev.Data) {
				break
			}
		}
		if stop != providers.StopToolUse {
			b.Fatalf("stop = %q", stop)
		}
	})
}

// BenchmarkStream measures the whole provider over a local HTTP server (transport, socket,
// goroutines included), per delta.
func BenchmarkStream(b *testing.B) {
	body, deltas := benchStream(1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	defer srv.Close()
	p, _ := NewWithTransport(providers.Config{BaseURL: srv.URL, Model: "m"}, httpsse.New())
	req := &providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "hi"}}}}}
	b.ReportAllocs()
	providertest.BenchPerDelta(b, deltas, func() {
		var last providers.Event
		for ev := range p.Stream(context.Background(), req) {
			last = ev
		}
		if last.Type != providers.EventCompleted {
			b.Fatalf("last = %+v", last)
		}
	})
}
