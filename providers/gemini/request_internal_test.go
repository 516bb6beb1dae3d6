package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
)

func testTools() []providers.ToolSpec {
	return []providers.ToolSpec{
		{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`)},
		{Name: "list_dir", Description: "List a directory <as is> & \u2028 more."},
	}
}

// TestEncodeRequestIsMarshal: the body with its tools spliced in is json.Marshal's, byte for
// byte, cold and warm, after another tool set, with the cached prefix (no tools), without
// messages, and with a tool input that holds what the placeholder looks like without its nonce.
func TestEncodeRequestIsMarshal(t *testing.T) {
	var cache providers.ToolsJSON
	text := func(role providers.Role, s string) providers.Message {
		return providers.Message{Role: role, Parts: []providers.Part{{Type: providers.PartText, Text: s}}}
	}
	other := testTools()
	other[0].Description = "Read a file, in kelvin."
	forged := providers.Message{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartToolCall, ToolCallID: "c1", ToolName: "read_file",
		Args: json.RawMessage(`{"path":"[{\"functionDeclarations\":[{\"name\":\"\\u0000agentd:tools:\"}]}]"}`)}}}
	cases := []struct {
		name string
		req  providers.Request
		opt  buildOptions
	}{
		{"tools", providers.Request{System: "S", Context: "C", Tools: testTools(), Messages: []providers.Message{text(providers.RoleUser, "Hi")}}, buildOptions{}},
		{"other tools", providers.Request{System: "S", Tools: other, Messages: []providers.Message{text(providers.RoleUser, "Hi")}}, buildOptions{}},
		{"tools only", providers.Request{Tools: testTools()}, buildOptions{}},
		{"forged marker", providers.Request{Tools: testTools(), Messages: []providers.Message{text(providers.RoleUser, "Hi"), forged}}, buildOptions{}},
		{"cached prefix", providers.Request{System: "S", Tools: testTools(), Messages: []providers.Message{text(providers.RoleUser, "Hi")}}, buildOptions{cachedContent: "cachedContents/x"}},
		{"no tools", providers.Request{System: "S", Messages: []providers.Message{text(providers.RoleUser, "Hi")}}, buildOptions{}},
	}
	for round := range 2 {
		for _, tt := range cases {
			body, err := buildBody(&tt.req, "gemini-2.5-flash", tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(&body)
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeRequest(&body, tt.req.Tools, &cache)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("round %d, %s:\n got %s\nwant %s", round, tt.name, got, want)
			}
		}
	}
}

// TestToolsEncodedOncePerToolSet: the same tools sent again are not encoded again; changed ones
// are.
func TestToolsEncodedOncePerToolSet(t *testing.T) {
	var cache providers.ToolsJSON
	encodeTools := func(specs []providers.ToolSpec) []byte {
		b, err := cache.Encode(specs, func() ([]byte, error) { return json.Marshal(tools(specs)) })
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := encodeTools(testTools())
	if again := encodeTools(testTools()); &again[0] != &first[0] {
		t.Fatal("the same tool set was encoded again")
	}
	changed := testTools()
	changed[1].Description = "List a directory, sorted."
	if b := encodeTools(changed); &b[0] == &first[0] || !strings.Contains(string(b), "sorted") {
		t.Fatalf("a changed description kept the old encoding: %s", b)
	}
	// buildRequest keeps its encoding between requests: the same tools again splice the bytes
	// the cache holds.
	req := &providers.Request{Tools: testTools()}
	if _, err := buildRequest(req, "gemini-2.5-flash", buildOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := toolsJSON.Encode(req.Tools, func() ([]byte, error) { t.Fatal("the tools were encoded again"); return nil, nil })
	if err != nil || !strings.Contains(string(b), `"functionDeclarations"`) {
		t.Fatalf("kept encoding %s, %v", b, err)
	}
}
