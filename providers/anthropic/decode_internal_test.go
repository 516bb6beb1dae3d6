package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/providertest"
)

// decodeBytes runs the decoder over an SSE body the way Stream does, without the network.
func decodeBytes(body []byte, noFast bool) []providers.Event {
	var evs []providers.Event
	em := providers.NewEmitter(func(ev providers.Event) bool { evs = append(evs, ev); return true })
	d := decoder{em: em, noFast: noFast}
	if readErr := providertest.ReadSSE(body, d.event); readErr != nil {
		em.Finish(providers.ProtocolError(name, readErr.Error()))
	}
	em.Finish(providers.Truncated(name))
	return evs
}

// TestFastPathAgreesWithEncodingJSON decodes every fixture with and without the fast
// path and requires identical events.
func TestFastPathAgreesWithEncodingJSON(t *testing.T) {
	providertest.FastPathAgreesOnFiles(t, providertest.SSEFiles(t, "anthropic"), decodeBytes)
}

// FuzzDecode feeds arbitrary bytes to the SSE reader and the decoder: nothing may panic, the
// stream must end with exactly one terminal event, and on well-formed input the fast path must
// agree with encoding/json.
func FuzzDecode(f *testing.F) {
	providertest.AddSeeds(f, providertest.SSEFiles(&testing.T{}, "anthropic"))
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\\u00e9\\n\"}}\n\n"))
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		fast := decodeBytes(body, false)
		for _, ev := range fast {
			if ev.Type == providers.EventFailed && (ev.Err == nil || ev.Err.Message == "") {
				t.Fatalf("failed event without a message: %+v", ev)
			}
		}
		providertest.EndsOnce(t, fast)
		// the fast path is lenient where encoding/json is strict, so the two may only be compared
		// when every data line is valid JSON.
		if providertest.EveryData(body, dataValid) {
			providertest.FastPathAgrees(t, "input", body, decodeBytes)
		}
	})
}

// dataValid holds for event data encoding/json accepts, and for no data at all; data of
// white space only is not valid here (the decoder refuses it).
func dataValid(s string) bool {
	return s == "" || strings.TrimSpace(s) != "" && json.Valid([]byte(s))
}
