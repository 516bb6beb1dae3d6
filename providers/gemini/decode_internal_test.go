package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/agentd-dev/agentd/providers/providertest"
)

// decodeBytes runs the decoder over an SSE body the way Stream does, without the network.
func decodeBytes(body []byte, noFast bool) []providers.Event {
	var evs []providers.Event
	em := providers.NewEmitter(func(ev providers.Event) bool { evs = append(evs, ev); return true })
	d := decoder{em: em, noFast: noFast, idPrefix: "id-"}
	if err := providertest.ReadSSE(body, func(_ string, data []byte) bool { return d.data(data) }); err != nil {
		em.Fail(providers.ProtocolError(name, err.Error()))
	}
	if !em.Ended() {
		d.end()
	}
	return evs
}

// TestFastPathAgreesWithEncodingJSON decodes every fixture with and without the fast
// path and requires identical events.
func TestFastPathAgreesWithEncodingJSON(t *testing.T) {
	providertest.FastPathAgreesOnFiles(t, providertest.SSEFiles(t, "gemini"), decodeBytes)
}

func FuzzDecode(f *testing.F) {
	providertest.AddSeeds(f, providertest.SSEFiles(&testing.T{}, "gemini"))
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\\u00e9\\\\\",\"thought\":true},{\"text\":\"x\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":-3}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		fast := decodeBytes(body, false)
		for _, ev := range fast {
			if ev.Type == providers.EventToolCallCompleted && !json.Valid(ev.Args) {
				t.Fatalf("tool call args not JSON: %q", ev.Args)
			}
		}
		providertest.EndsOnce(t, fast)
		if providertest.EveryData(body, dataValid) {
			providertest.FastPathAgrees(t, "input", body, decodeBytes)
		}
	})
}

// dataValid holds for event data encoding/json accepts and for data of white space only (the
// decoder skips it).
func dataValid(s string) bool {
	return strings.TrimSpace(s) == "" || json.Valid([]byte(s))
}

func benchStream(n int) ([]byte, int) {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"%d\\n%d\\n\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 18,\"candidatesTokenCount\": %d,\"totalTokenCount\": %d,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 18}],\"thoughtsTokenCount\": 35,\"serviceTier\": \"standard\"},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"ru1garvBEoOiqtsP2fznmQw\"}\r\n\r\n", i, i+1, i+1, i+54)
	}
	b.WriteString("data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"end\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 18,\"candidatesTokenCount\": 80,\"totalTokenCount\": 133,\"thoughtsTokenCount\": 35}}\r\n\r\n")
	return []byte(b.String()), n + 1
}

// BenchmarkDecode measures SSE parsing plus JSON decoding plus normalization, per delta (one
// chunk of a recorded-style stream, usage repeated on each), from the bytes (no network).
func BenchmarkDecode(b *testing.B) {
	body, deltas := benchStream(1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	providertest.BenchPerDelta(b, deltas, func() {
		var last providers.Event
		em := providers.NewEmitter(func(ev providers.Event) bool { last = ev; return true })
		d := decoder{em: em, idPrefix: "id-"}
		for ev, err := range httpsse.ReadEvents(bytes.NewReader(body), 0) {
			if err != nil || !d.data(ev.Data) {
				break
			}
		}
		d.end()
		if last.Type != providers.EventCompleted {
			b.Fatalf("last = %+v", last)
		}
	})
}
