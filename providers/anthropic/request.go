package anthropic

import (
	"encoding/json"
	"errors"

	"github.com/agentd-dev/agentd/providers"
)

const (
	// DefaultMaxTokens is used when the request sets no limit.
	DefaultMaxTokens = 8192
	// DefaultThinkingBudget is used when thinking is on without a budget.
	DefaultThinkingBudget = 4096
	// MinThinkingBudget is the smallest budget the API accepts.
	MinThinkingBudget = 1024
)

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type textBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"` // encoding/json writes []byte as base64
}

// block is one content block of a message; only the fields of its Type are set.
type block struct {
	Type string `json:"type"`

	Text *string `json:"text,omitempty"`

	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"`

	Source *imageSource `json:"source,omitempty"`

	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   *string `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`

	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type request struct {
	Model       string      `json:"model"`
	MaxTokens   int         `json:"max_tokens"`
	System      []textBlock `json:"system,omitempty"`
	Messages    []message   `json:"messages"`
	Tools       []tool      `json:"tools,omitempty"`
	Thinking    *thinking   `json:"thinking,omitempty"`
	Temperature *float64    `json:"temperature,omitempty"`
	Stream      bool        `json:"stream"`
}

var emptyObject = json.RawMessage(`{}`)

// BuildRequest encodes req as a /v1/messages body. Prompt-caching breakpoints go after the tool
// block, after the stable system prompt, on the last cacheable block of the conversation, so
// each turn re-reads the previous turn's prefix from the cache (tools, then system, then
// messages is the order Anthropic caches in), and at the end of req.Stable's messages: four,
// the most the API takes. model is used when req.Model is empty.
func BuildRequest(req *providers.Request, model string) ([]byte, error) {
	if req == nil {
		return nil, errors.New("nil request")
	}
	r := request{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true, Temperature: req.Temperature}
	if r.Model == "" {
		r.Model = model
	}
	if r.Model == "" {
		return nil, errors.New("no model")
	}
	if r.MaxTokens <= 0 {
		r.MaxTokens = DefaultMaxTokens
	}
	if req.System != "" {
		r.System = append(r.System, textBlock{Type: "text", Text: req.System, CacheControl: ephemeral})
	}
	if req.Context != "" {
		r.System = append(r.System, textBlock{Type: "text", Text: req.Context})
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		r.Tools = append(r.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if n := len(r.Tools); n > 0 {
		r.Tools[n-1].CacheControl = ephemeral
	}
	if req.Thinking.Enabled {
		budget := req.Thinking.BudgetTokens
		if budget <= 0 {
			budget = DefaultThinkingBudget
		}
		budget = max(budget, MinThinkingBudget)
		// The budget must stay below max_tokens: leave the answer room of its own.
		if r.MaxTokens <= budget {
			r.MaxTokens = budget + r.MaxTokens
		}
		r.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
		// Extended thinking refuses any temperature but the default.
		r.Temperature = nil
	}
	stable := 0 // the encoded messages that hold req.Messages[:req.Stable]
	for i, m := range req.Messages {
		blocks := convertParts(m)
		if len(blocks) > 0 {
			role := "user"
			if m.Role == providers.RoleAssistant {
				role = "assistant"
			}
			r.Messages = append(r.Messages, message{Role: role, Content: blocks})
		}
		if i+1 == req.Stable {
			stable = len(r.Messages)
		}
	}
	markConversationPrefix(r.Messages)
	// The fourth breakpoint: the end of what the next requests send unchanged, so that when
	// the engine rewrites a later message (it shortens older tool results in blocks) the cache
	// still serves everything before it. The last breakpoint alone would not: the server looks
	// for an earlier cache entry only about 20 blocks back from a breakpoint.
	if stable > 0 && req.Stable < len(req.Messages) {
		markConversationPrefix(r.Messages[:stable])
	}
	if len(r.Tools) == 0 {
		return json.Marshal(&r)
	}
	// The tools, the same with every request of a session and most of its bytes, are encoded
	// once per tool set and spliced in where json.Marshal puts them.
	return providers.MarshalWithTools(&toolsJSON, req.Tools, &r, &r.Tools, func(marker string) tool { return tool{Name: marker} })
}

// toolsJSON is the encoding of the last tool set sent.
var toolsJSON providers.ToolsJSON

func convertParts(m providers.Message) []block {
	var out []block
	for _, p := range m.Parts {
		switch p.Type {
		case providers.PartText:
			if p.Text == "" {
				continue // the API rejects empty text blocks
			}
			out = append(out, block{Type: "text", Text: &p.Text})
		case providers.PartImage:
			out = append(out, block{Type: "image", Source: &imageSource{Type: "base64", MediaType: p.MimeType, Data: p.Data}})
		case providers.PartThinking:
			if m.Role != providers.RoleAssistant {
				continue
			}
			switch {
			case p.Redacted != "":
				out = append(out, block{Type: "redacted_thinking", Data: p.Redacted})
			case p.Signature != "":
				out = append(out, block{Type: "thinking", Thinking: &p.Text, Signature: p.Signature})
			}
			// Unsigned thinking (from another provider, or cut off) cannot be sent back.
		case providers.PartToolCall:
			input := p.Args
			if len(input) == 0 || !json.Valid(input) {
				input = emptyObject
			}
			out = append(out, block{Type: "tool_use", ID: p.ToolCallID, Name: p.ToolName, Input: input})
		case providers.PartToolResult:
			text := p.Text
			out = append(out, block{Type: "tool_result", ToolUseID: p.ToolCallID, Content: &text, IsError: p.IsError})
		}
	}
	return out
}

// markConversationPrefix puts the third breakpoint on the last block of the conversation that
// may carry one (thinking blocks may not).
func markConversationPrefix(msgs []message) {
	for i := len(msgs) - 1; i >= 0; i-- {
		c := msgs[i].Content
		for j := len(c) - 1; j >= 0; j-- {
			if c[j].Type == "thinking" || c[j].Type == "redacted_thinking" {
				continue
			}
			c[j].CacheControl = ephemeral
			return
		}
	}
}
