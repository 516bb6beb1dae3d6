package providers

import (
	"encoding/json"
	"strings"
	"testing"
)

type fakeTool struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

type fakeBody struct {
	Model string `json:"model"`
	// Input stands for a model's tool input, which a dialect may send as the raw JSON it came as.
	Input json.RawMessage `json:"input,omitempty"`
	Tools []fakeTool      `json:"tools,omitempty"`
}

// TestMarshalWithToolsIsMarshal: the spliced encoding is json.Marshal's, byte for byte, also when
// a raw value ahead of the tools holds what a placeholder with a guessable name would encode to:
// the model's own earlier tool input cannot take the tools' place in the request.
func TestMarshalWithToolsIsMarshal(t *testing.T) {
	specs := []ToolSpec{{Name: "read_file", Description: "Read", Schema: json.RawMessage(`{"type":"object"}`)}}
	forged, _ := json.Marshal([]fakeTool{{Name: "\x00agentd:tools"}})
	prefix, _ := json.Marshal([]fakeTool{{Name: strings.TrimRight(ToolsMarker(), "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}})
	var c ToolsJSON
	for _, input := range []json.RawMessage{nil, json.RawMessage(`{"path":"a.go"}`), forged, prefix} {
		body := fakeBody{Model: "m", Input: input, Tools: []fakeTool{{Name: "read_file", Schema: specs[0].Schema}}}
		want, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 { // encoded, then from the cache
			b := body
			got, err := MarshalWithTools(&c, specs, &b, &b.Tools, func(m string) fakeTool { return fakeTool{Name: m} })
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("round %d, input %s:\n got %s\nwant %s", round, input, got, want)
			}
		}
	}
	if m := ToolsMarker(); len(m) < len("\x00agentd:tools:")+20 || m != ToolsMarker() {
		t.Errorf("ToolsMarker() = %q: want a stable name ending in a nonce", m)
	}
}
