package protocol

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func serverCapsCases() []AgentServerCapabilities {
	full := AgentServerCapabilities{
		ProtocolVersion: 1,
		AgentCapabilities: AgentCapabilities{
			LoadSession:         true,
			SessionCapabilities: SessionCapabilities{List: &struct{}{}, Resume: &struct{}{}, Close: &struct{}{}, Delete: &struct{}{}},
			PromptCapabilities:  PromptCapabilities{Image: true, EmbeddedContext: true},
		},
		Providers: []ProviderInfo{
			{ProviderID: "anthropic", APIType: "anthropic", BaseURL: "https://api.anthropic.com", Model: "claude-sonnet-4-5", KeyStatus: KeyMissing},
			{ProviderID: "a <b> & \"c\"\n", APIType: "d\u2028e\x01\xff", BaseURL: "", Models: []string{"m1", "<m2>"}, KeyStatus: KeySet},
			{},
		},
	}
	return []AgentServerCapabilities{
		full,
		{},
		{ProtocolVersion: -3, Providers: []ProviderInfo{}},
		{AgentCapabilities: AgentCapabilities{SessionCapabilities: SessionCapabilities{Resume: &struct{}{}, Delete: &struct{}{}},
			PromptCapabilities: PromptCapabilities{Audio: true}, MCPCapabilities: MCPCapabilities{HTTP: true, SSE: true}}},
		{AgentCapabilities: AgentCapabilities{SessionCapabilities: SessionCapabilities{Close: &struct{}{}}}, Providers: []ProviderInfo{{Models: []string{}}}},
	}
}

func TestAppendAgentServerCapabilitiesMatchesMarshal(t *testing.T) {
	for i, c := range serverCapsCases() {
		want, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendAgentServerCapabilities(nil, &c); !bytes.Equal(got, want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzAppendAgentServerCapabilities(f *testing.F) {
	f.Add(1, true, uint8(0b1011), uint8(0b10101), "openai", "openai", "https://x/v1", "gpt", "m", "set")
	f.Add(0, false, uint8(0), uint8(0), "", "", "", "", "", "")
	f.Add(7, true, uint8(0xff), uint8(0xff), "<&>", "\u2028", "\xff\xfe", "\"\\", "\x00", "\t")
	f.Fuzz(func(t *testing.T, version int, load bool, sess, flags uint8, id, apiType, baseURL, model, m, key string) {
		set := func(bit uint8) *struct{} {
			if sess&bit != 0 {
				return &struct{}{}
			}
			return nil
		}
		c := AgentServerCapabilities{
			ProtocolVersion: version,
			AgentCapabilities: AgentCapabilities{
				LoadSession:         load,
				SessionCapabilities: SessionCapabilities{List: set(1), Resume: set(2), Close: set(4), Delete: set(8)},
				PromptCapabilities:  PromptCapabilities{Image: flags&1 != 0, Audio: flags&2 != 0, EmbeddedContext: flags&4 != 0},
				MCPCapabilities:     MCPCapabilities{HTTP: flags&8 != 0, SSE: flags&16 != 0},
			},
		}
		if sess&16 == 0 {
			p := ProviderInfo{ProviderID: id, APIType: apiType, BaseURL: baseURL, Model: model, KeyStatus: key}
			if sess&32 != 0 {
				p.Models = []string{m, model}
			}
			c.Providers = []ProviderInfo{p, {ProviderID: m}}
		}
		want, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendAgentServerCapabilities(nil, &c); !bytes.Equal(got, want) {
			t.Errorf("\n got %s\nwant %s", got, want)
		}
	})
}

// A field added to these types must be added to the hand-written encoder too: this test fails
// until the counts below (and AppendAgentServerCapabilities) are updated.
func TestAppendAgentServerCapabilitiesCoversEveryField(t *testing.T) {
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[AgentServerCapabilities](): 3, reflect.TypeFor[AgentCapabilities](): 4,
		reflect.TypeFor[SessionCapabilities](): 4, reflect.TypeFor[PromptCapabilities](): 3,
		reflect.TypeFor[MCPCapabilities](): 2, reflect.TypeFor[ProviderInfo](): 6,
	} {
		if got := typ.NumField(); got != n {
			t.Errorf("%s has %d fields, AppendAgentServerCapabilities writes %d", typ, got, n)
		}
	}
}
