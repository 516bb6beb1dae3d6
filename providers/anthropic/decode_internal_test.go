package anthropic

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/agentd-dev/agentd/providers/providertest"
	sse "github.com/tmaxmax/go-sse"
)

// decodeBytes runs the decoder over an SSE body the way Stream does, without the network.
func decodeBytes(body []byte, noFast bool) []providers.Event {
	var evs []providers.Event
	em := providers.NewEmitter(func(ev providers.Event) bool { evs = append(evs, ev); return true })
	d := decoder{em: em, noFast: noFast}
	var readErr error
	for ev, err := range sse.Read(bytes.NewReader(body), &sse.ReadConfig{MaxEventSize: 1 << 20}) {
		if err != nil {
			readErr = err
			break
		}
		if !d.event(ev.Type, httpsse.Bytes(ev.Data)) {
			break
		}
	}
	if readErr != nil {
		em.Finish(providers.ProtocolError(name, readErr.Error()))
	}
	em.Finish(providers.Truncated(name))
	return evs
}

func sseFiles(t *testing.T) []string {
	files, _ := filepath.Glob(filepath.Join(providertest.RepoRoot(t), "testdata", "providers", "anthropic", "*.sse"))
	shared, _ := filepath.Glob(filepath.Join(filepath.Dir(providertest.RepoRoot(t)), "shared", "fixtures", "providers", "anthropic", "*.sse"))
	return append(files, shared...)
}

// TestFastPathAgreesWithEncodingJSON decodes every fixture with and without the fast
// path and requires identical events.
func TestFastPathAgreesWithEncodingJSON(t *testing.T) {
	files := sseFiles(t)
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fast, slow := decodeBytes(body, false), decodeBytes(body, true)
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: fast path differs:\nfast:\n%s\nslow:\n%s", filepath.Base(f), providertest.Dump(fast), providertest.Dump(slow))
		}
	}
}

// FuzzDecode feeds arbitrary bytes to the SSE reader and the decoder: nothing may panic, the
// stream must end with exactly one terminal event, and on well-formed input the fast path must
// agree with encoding/json.
func FuzzDecode(f *testing.F) {
	for _, file := range sseFiles(&testing.T{}) {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\\u00e9\\n\"}}\n\n"))
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		fast := decodeBytes(body, false)
		terminal := 0
		for _, ev := range fast {
			if ev.Type == providers.EventCompleted || ev.Type == providers.EventFailed {
				terminal++
			}
			if ev.Type == providers.EventFailed && (ev.Err == nil || ev.Err.Message == "") {
				t.Fatalf("failed event without a message: %+v", ev)
			}
		}
		if terminal != 1 || (fast[len(fast)-1].Type != providers.EventCompleted && fast[len(fast)-1].Type != providers.EventFailed) {
			t.Fatalf("%d terminal events:\n%s", terminal, providertest.Dump(fast))
		}
		// the fast path is lenient where encoding/json is strict, so the two may only be compared
		// when every data line is valid JSON.
		if allDataValid(body) {
			slow := decodeBytes(body, true)
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("fast path differs:\nfast:\n%s\nslow:\n%s", providertest.Dump(fast), providertest.Dump(slow))
			}
		}
	})
}

func allDataValid(body []byte) bool {
	for ev, err := range sse.Read(bytes.NewReader(body), &sse.ReadConfig{MaxEventSize: 1 << 20}) {
		if err != nil {
			return false
		}
		if ev.Data != "" && !jsonValid(ev.Data) {
			return false
		}
	}
	return true
}

func jsonValid(s string) bool {
	return strings.TrimSpace(s) != "" && json.Valid([]byte(s))
}
