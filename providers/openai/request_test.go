package openai

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/providertest"
)

func text(role providers.Role, s string) providers.Message {
	return providers.Message{Role: role, Parts: []providers.Part{{Type: providers.PartText, Text: s}}}
}

// history is a conversation with every kind of part: a thinking block with a signature, text,
// two tool calls, their results (one failed), and a user turn with an image.
func history() []providers.Message {
	return []providers.Message{
		text(providers.RoleUser, "What is in main.go? And list the directory."),
		{Role: providers.RoleAssistant, Parts: []providers.Part{
			{Type: providers.PartThinking, Text: "I should read the file and list the directory.", Signature: "EqQBCkgIBxABGAIq"},
			{Type: providers.PartText, Text: "Let me look."},
			{Type: providers.PartToolCall, ToolCallID: "call_1", ToolName: "read_file", Args: json.RawMessage(`{"path":"main.go"}`)},
			{Type: providers.PartToolCall, ToolCallID: "call_2", ToolName: "list_dir", Args: nil},
		}},
		{Role: providers.RoleUser, Parts: []providers.Part{
			{Type: providers.PartToolResult, ToolCallID: "call_1", ToolName: "read_file", Text: "package main\n\nfunc main() {}\n"},
			{Type: providers.PartToolResult, ToolCallID: "call_2", ToolName: "list_dir", Text: "permission denied", IsError: true},
		}},
		{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartText, Text: "main.go declares an empty main; the directory could not be listed."}}},
		{Role: providers.RoleUser, Parts: []providers.Part{
			{Type: providers.PartText, Text: "What does this screenshot show?"},
			{Type: providers.PartImage, MimeType: "image/png", Data: []byte("\x89PNG\r\n")},
		}},
	}
}

func tools() []providers.ToolSpec {
	return []providers.ToolSpec{
		{Name: "read_file", Description: "Read a file of the workspace.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "list_dir", Description: "List a directory.", Schema: nil},
	}
}

type requestCase struct {
	name  string
	model string
	req   providers.Request
	opt   options
}

func requestCases() []requestCase {
	temp := 0.2
	return []requestCase{
		{name: "text_tools_stream_options", model: "gpt-4o", req: providers.Request{
			System: "You are agentd.", Context: "Roots: /src", Messages: []providers.Message{text(providers.RoleUser, "Hi")},
			Tools: tools(), MaxTokens: 4096, Temperature: &temp}},
		{name: "history_tool_calls_results_image", model: "gpt-4.1", opt: options{openAIHost: true}, req: providers.Request{
			System: "You are agentd.", Messages: history(), Tools: tools(), MaxTokens: 4096}},
		// DeepSeek's thinking mode needs the reasoning of a tool-calling turn sent back.
		{name: "deepseek_reasoning_content_history", model: "deepseek-reasoner", req: providers.Request{
			System: "You are agentd.", Messages: history(), Tools: tools(), MaxTokens: 4096}},
		{name: "reasoning_model_params", model: "gpt-5.1", req: providers.Request{
			System: "You are agentd.", Messages: []providers.Message{text(providers.RoleUser, "Hi")}, Tools: tools(),
			MaxTokens: 8192, Temperature: &temp, Thinking: providers.Thinking{Enabled: true, BudgetTokens: 20000}}},
		{name: "openrouter_reasoning_history", model: "anthropic/claude-haiku-4.5", opt: options{openRouter: true}, req: providers.Request{
			System: "You are agentd.", Messages: history(), Tools: tools(), MaxTokens: 2048,
			Thinking: providers.Thinking{Enabled: true, BudgetTokens: 1024}}},
		// A call left without a result (a cancelled turn) gets one; a result answering no call
		// travels as user text.
		{name: "unpaired_tool_messages", model: "gpt-4o", opt: options{openAIHost: true}, req: providers.Request{
			Messages: []providers.Message{
				text(providers.RoleUser, "Read a and b."),
				{Role: providers.RoleAssistant, Parts: []providers.Part{
					{Type: providers.PartToolCall, ToolCallID: "call_a", ToolName: "read_file", Args: json.RawMessage(`{"path":"a"}`)},
					{Type: providers.PartToolCall, ToolCallID: "call_b", ToolName: "read_file", Args: json.RawMessage(`{"path":"b"}`)},
				}},
				{Role: providers.RoleUser, Parts: []providers.Part{
					{Type: providers.PartToolResult, ToolCallID: "call_a", ToolName: "read_file", Text: "A"},
					{Type: providers.PartToolResult, ToolCallID: "call_zzz", ToolName: "read_file", Text: "stray"},
					{Type: providers.PartText, Text: "Stop, do something else."},
				}},
			}}},
		// A tool result's images follow the tool messages in a user message.
		{name: "tool_result_images", model: "gpt-4.1", opt: options{openAIHost: true}, req: providers.Request{
			Messages: providertest.ToolImages()}},
		{name: "dropped_params", model: "local-model", opt: options{drop: map[string]bool{"max_tokens": true, "temperature": true, "stream_options": true}}, req: providers.Request{
			Messages: []providers.Message{text(providers.RoleUser, "Hi")}, MaxTokens: 512, Temperature: &temp}},
	}
}

func TestRequestGoldens(t *testing.T) {
	tests := requestCases()
	dir := filepath.Join(providertest.RepoRoot(t), "testdata", "providers", "openai", "requests")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(buildRequest(&tt.req, tt.model, tt.opt))
			if err != nil {
				t.Fatal(err)
			}
			providertest.Golden(t, filepath.Join(dir, tt.name+".json"), got)
		})
	}
}

func TestIsReasoningModel(t *testing.T) {
	for model, want := range map[string]bool{
		"gpt-5": true, "gpt-5.1": true, "gpt-5-mini": true, "GPT-5.2-codex": true, "o1": true, "o3-mini": true, "o4-mini-high": true,
		"openai/o3": true, "openai/gpt-5": true,
		"gpt-5-chat-latest": false, "gpt-4o": false, "gpt-4.1": false, "omni-moderation": false, "ollama3": false, "qwen2.5-coder": false, "o": false,
	} {
		if got := isReasoningModel(model); got != want {
			t.Errorf("isReasoningModel(%q) = %v, want %v", model, got, want)
		}
	}
}

// TestEncodeRequestIsMarshal: the body sent, with its tools from the cache, is json.Marshal's,
// byte for byte, whether the cache is cold, warm or holds another tool set.
func TestEncodeRequestIsMarshal(t *testing.T) {
	var cache providers.ToolsJSON
	// With no system prompt and no message, messages is null: the tools still go where
	// json.Marshal puts them.
	cases := append(requestCases(), requestCase{name: "tools only", model: "m", req: providers.Request{Tools: tools()}})
	for round := range 2 {
		for _, tt := range cases {
			body := buildRequest(&tt.req, tt.model, tt.opt)
			want, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeRequest(body, tt.req.Tools, &cache)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("round %d, %s:\n got %s\nwant %s", round, tt.name, got, want)
			}
		}
	}
}

// TestToolsEncodedOncePerToolSet: the same tools sent again are not encoded again; a change of
// any of their fields is.
func TestToolsEncodedOncePerToolSet(t *testing.T) {
	var cache providers.ToolsJSON
	req := providers.Request{Messages: []providers.Message{text(providers.RoleUser, "Hi")}, Tools: tools()}
	encodeTools := func(specs []providers.ToolSpec) []byte {
		req.Tools = specs
		b, err := cache.Encode(specs, func() ([]byte, error) { return json.Marshal(buildRequest(&req, "m", options{}).Tools) })
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := encodeTools(tools())
	if again := encodeTools(tools()); &again[0] != &first[0] {
		t.Fatal("the same tool set was encoded again")
	}
	changed := tools()
	changed[1].Description = "List a directory, sorted."
	if b := encodeTools(changed); &b[0] == &first[0] || !strings.Contains(string(b), "sorted") {
		t.Fatalf("a changed description kept the old encoding: %s", b)
	}
	schema := tools()
	schema[0].Schema = json.RawMessage(`{"type":"object","properties":{"file":{"type":"string"}}}`)
	if b := encodeTools(schema); !strings.Contains(string(b), `"file"`) {
		t.Fatalf("a changed schema kept the old encoding: %s", b)
	}
	// The cache holds its own copy: a caller reusing its schema's bytes does not change it.
	own := tools()
	b1 := encodeTools(own)
	copy(own[0].Schema, `{"type":"object","properties":{"PATH"`)
	if b2 := encodeTools(own); &b2[0] == &b1[0] || !strings.Contains(string(b2), "PATH") {
		t.Fatalf("schema bytes changed in place kept the old encoding: %s", b2)
	}
}
