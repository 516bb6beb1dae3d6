package rpc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentd-dev/agentd/rpc/protocol"
)

// TestInitializeResultsMatchMarshal holds both doors' hand-written initialize answers to what
// encoding/json writes for the same fields (the protocol shapes inside them are held to
// reflection by protocol's TestInitializeShapesMatchMarshal).
func TestInitializeResultsMatchMarshal(t *testing.T) {
	type plainLSP initializeResult // the same fields without the MarshalJSON method
	type plainACP acpInitResult
	check := func(got func() ([]byte, error), v any) {
		t.Helper()
		g, err := got()
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, want) {
			t.Errorf("\n got %s\nwant %s", g, want)
		}
	}
	agent := protocol.AgentServerCapabilities{ProtocolVersion: 1,
		AgentCapabilities: protocol.AgentCapabilities{LoadSession: true, SessionCapabilities: protocol.SessionCapabilities{List: &struct{}{}},
			PromptCapabilities: protocol.PromptCapabilities{Image: true}},
		Providers: []protocol.ProviderInfo{{ProviderID: "p<1>", APIType: "openai", BaseURL: "http://x/?a=1&b=2", KeyStatus: protocol.KeyMissing}}}
	var lsps []initializeResult
	var l initializeResult
	lsps = append(lsps, l)
	l.Capabilities.PositionEncoding = "utf-16"
	l.Capabilities.Experimental.Agent = agent
	l.ServerInfo.Name, l.ServerInfo.Version = "agentd", "1.0 <dev>\u2028\xff"
	lsps = append(lsps, l)
	for _, r := range lsps {
		check(r.MarshalJSON, plainLSP(r))
		check(func() ([]byte, error) { return json.Marshal(r) }, plainLSP(r))
	}
	acps := []acpInitResult{
		{},
		{AuthMethods: []acpAuthMethod{}, Meta: protocol.Meta{}},
		{ProtocolVersion: 1, AgentCapabilities: acpAgentCapabilities{LoadSession: true, MCPCapabilities: protocol.MCPCapabilities{HTTP: true},
			SessionCapabilities: acpSessionCapabilities{List: &struct{}{}, AdditionalDirectories: &struct{}{}},
			Auth:                acpAgentAuthCapabilities{Logout: &struct{}{}}},
			AuthMethods: []acpAuthMethod{{ID: AuthMethodKey, Name: "API key", Description: "run `agentd key set` & \"go\"", Type: "terminal", Args: []string{"key", "set"}},
				{ID: "b", Args: []string{}}},
			AgentInfo: protocol.ClientInfo{Name: "agentd", Title: "agentd", Version: "dev"},
			Meta:      protocol.Meta{"agentd/providers": agent.Providers, "a": nil, "z<": []string{"x"}, "é\u2028": map[string]any{"b": 1, "a": []protocol.ProviderInfo(nil)}}},
		{Meta: protocol.Meta{"agentd/providers": []protocol.ProviderInfo(nil)}},
		{Meta: protocol.Meta{"agentd/providers": []protocol.ProviderInfo{}}},
	}
	for _, r := range acps {
		check(r.MarshalJSON, plainACP(r))
		check(func() ([]byte, error) { return json.Marshal(r) }, plainACP(r))
	}
}
