package rpc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentd-dev/agentd/rpc/protocol"
)

// initializeResult's hand-written MarshalJSON writes what encoding/json's reflection would.
func TestInitializeResultMarshalJSON(t *testing.T) {
	var r initializeResult
	r.Capabilities.PositionEncoding = "utf-16"
	r.ServerInfo.Name = "agentd"
	r.ServerInfo.Version = "v1.2.3-<dev>&\u2028"
	r.Capabilities.Experimental.Agent = protocol.AgentServerCapabilities{
		ProtocolVersion: protocol.ProtocolVersion,
		AgentCapabilities: protocol.AgentCapabilities{
			LoadSession:         true,
			SessionCapabilities: protocol.SessionCapabilities{List: &struct{}{}, Close: &struct{}{}},
			PromptCapabilities:  protocol.PromptCapabilities{Image: true, EmbeddedContext: true},
		},
		Providers: []protocol.ProviderInfo{{ProviderID: "ollama", APIType: "openai", BaseURL: "http://localhost:11434/v1", Model: "qwen2.5-coder", KeyStatus: protocol.KeyNotNeeded}},
	}
	type plain initializeResult // the same fields without the method
	for _, v := range []initializeResult{r, {}} {
		want, err := json.Marshal(plain(v))
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("\n got %s\nwant %s", got, want)
		}
	}
}
