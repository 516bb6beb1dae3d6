package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/agentd-dev/agentd/providers"
)

// The chat-completions request body. Field order is the order of the struct, so golden files stay
// stable; optional fields are omitted when zero.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Tools               []chatTool      `json:"tools,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
	Reasoning           *reasoningParam `json:"reasoning,omitempty"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
	// ResponseFormat is OpenAI's structured outputs (Ollama's /v1 maps it to its format);
	// JSONSchema is llama-server's own field. At most one is set (llama-server refuses both).
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	JSONSchema     json.RawMessage `json:"json_schema,omitempty"`
}

type responseFormat struct {
	Type       string         `json:"type"`
	JSONSchema responseSchema `json:"json_schema"`
}

type responseSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// reasoningParam is OpenRouter's unified reasoning switch.
type reasoningParam struct {
	MaxTokens int  `json:"max_tokens,omitempty"`
	Enabled   bool `json:"enabled,omitempty"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a string, a []contentPart, or nil (an assistant message with only tool calls).
	Content          any               `json:"content"`
	ToolCalls        []chatToolCall    `json:"tool_calls,omitempty"`
	ToolCallID       string            `json:"tool_call_id,omitempty"`
	ReasoningContent string            `json:"reasoning_content,omitempty"`
	ReasoningDetails []reasoningDetail `json:"reasoning_details,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatCallFunction `json:"function"`
}

type chatCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// reasoningDetail sends a signed (or encrypted) reasoning block back to OpenRouter, which needs it
// to continue an Anthropic or Gemini model's tool use.
type reasoningDetail struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// options are the per-server decisions the body depends on.
type options struct {
	// drop names parameters the server refused (from a 400 naming them).
	drop map[string]bool
	// openRouter enables OpenRouter's reasoning parameter and reasoning_details in history.
	openRouter bool
	// openAIHost is OpenAI's own API, which produces no visible reasoning and accepts no
	// reasoning fields in history.
	openAIHost bool
	// outputSchema is how the server takes Request.ResponseSchema ("" for not at all).
	outputSchema string
}

// isReasoningModel reports whether model is an OpenAI reasoning model (o-series, gpt-5.x), which
// takes max_completion_tokens and refuses temperature. A vendor prefix ("openai/o3") is ignored.
func isReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if strings.HasPrefix(m, "gpt-5") {
		return !strings.Contains(m, "chat") // gpt-5-chat-latest is not a reasoning model
	}
	return len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9'
}

// buildRequest builds the body for req.
func buildRequest(req *providers.Request, model string, opt options) chatRequest {
	body := chatRequest{
		Model:         model,
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
	}
	reasoning := isReasoningModel(model)
	if req.MaxTokens > 0 {
		if reasoning {
			body.MaxCompletionTokens = req.MaxTokens
		} else {
			body.MaxTokens = req.MaxTokens
		}
	}
	if req.Temperature != nil && !reasoning {
		t := *req.Temperature
		body.Temperature = &t
	}
	if req.Thinking.Enabled {
		switch {
		case opt.openRouter:
			body.Reasoning = &reasoningParam{MaxTokens: req.Thinking.BudgetTokens, Enabled: req.Thinking.BudgetTokens == 0}
		case reasoning:
			body.ReasoningEffort = effort(req.Thinking.BudgetTokens)
		}
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(bytes.TrimSpace(schema)) == 0 || string(bytes.TrimSpace(schema)) == "null" {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		body.Tools = append(body.Tools, chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	if len(req.ResponseSchema) > 0 {
		switch opt.outputSchema {
		case providers.OutputSchemaJSONSchema:
			body.JSONSchema = req.ResponseSchema
		case providers.OutputSchemaResponseFormat:
			body.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: responseSchema{Name: "reply", Schema: req.ResponseSchema}}
		}
	}
	body.Messages = buildMessages(req, opt)
	applyDrops(&body, opt.drop)
	return body
}

// encodeRequest is json.Marshal(body), byte for byte, with the tools array taken from cache
// (built from specs when the cache holds another tool set).
func encodeRequest(body chatRequest, specs []providers.ToolSpec, cache *providers.ToolsJSON) ([]byte, error) {
	if len(body.Tools) == 0 || cache == nil {
		return json.Marshal(body)
	}
	return providers.MarshalWithTools(cache, specs, &body, &body.Tools, func(marker string) chatTool { return chatTool{Type: marker} })
}

// applyDrops removes (or swaps) the parameters a server refused.
func applyDrops(body *chatRequest, drop map[string]bool) {
	if drop["max_tokens"] && body.MaxTokens > 0 {
		body.MaxCompletionTokens, body.MaxTokens = body.MaxTokens, 0
	}
	if drop["max_completion_tokens"] && body.MaxCompletionTokens > 0 {
		if drop["max_tokens"] {
			body.MaxCompletionTokens = 0
		} else {
			body.MaxTokens, body.MaxCompletionTokens = body.MaxCompletionTokens, 0
		}
	}
	if drop["temperature"] {
		body.Temperature = nil
	}
	if drop["stream_options"] {
		body.StreamOptions = nil
	}
	if drop["reasoning_effort"] {
		body.ReasoningEffort = ""
	}
	if drop["reasoning"] {
		body.Reasoning = nil
	}
	if drop["response_format"] {
		body.ResponseFormat = nil
	}
	if drop["json_schema"] {
		body.JSONSchema = nil
	}
}

// droppable lists the parameters agentd may send and can do without: a slice, which the
// compiler lays out (a map literal is built by the package's init at every start).
var droppable = []string{
	"max_tokens", "max_completion_tokens", "temperature",
	"stream_options", "reasoning_effort", "reasoning", "reasoning_content",
	"response_format", "json_schema",
}

// sent reports whether body carries the parameter name.
func sent(body *chatRequest, name string) bool {
	switch name {
	case "max_tokens":
		return body.MaxTokens > 0
	case "max_completion_tokens":
		return body.MaxCompletionTokens > 0
	case "temperature":
		return body.Temperature != nil
	case "stream_options":
		return body.StreamOptions != nil
	case "reasoning_effort":
		return body.ReasoningEffort != ""
	case "reasoning":
		return body.Reasoning != nil
	case "response_format":
		return body.ResponseFormat != nil
	case "json_schema":
		return body.JSONSchema != nil
	case "reasoning_content":
		for _, m := range body.Messages {
			if m.ReasoningContent != "" {
				return true
			}
		}
	}
	return false
}

func effort(budget int) string {
	switch {
	case budget <= 0:
		return "medium"
	case budget <= 4096:
		return "low"
	case budget <= 16384:
		return "medium"
	}
	return "high"
}

// buildMessages maps the neutral history: one system message (System then Context), tool results
// as tool messages right after the assistant message that called them, images as data URLs.
func buildMessages(req *providers.Request, opt options) []chatMessage {
	var msgs []chatMessage
	sys := strings.TrimSpace(req.System)
	if c := strings.TrimSpace(req.Context); c != "" {
		if sys != "" {
			sys += "\n\n"
		}
		sys += c
	}
	if sys != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: sys})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case providers.RoleAssistant:
			if am, ok := assistantMessage(m, opt); ok {
				msgs = append(msgs, am)
			}
		default:
			msgs = append(msgs, userMessages(m, opt)...)
		}
	}
	return pairToolMessages(msgs)
}

// pairToolMessages makes the history acceptable to servers that check tool pairing (OpenAI
// answers 400 otherwise): every tool_call of an assistant message is answered by a tool message
// right after it (a call whose result is missing, say because the turn was cancelled, gets one
// saying so), and a tool result that answers no call there travels as user text.
func pairToolMessages(msgs []chatMessage) []chatMessage {
	out := make([]chatMessage, 0, len(msgs))
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == "tool" {
			out = append(out, orphanResult(m))
			continue
		}
		out = append(out, m)
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		pending := make(map[string]bool, len(m.ToolCalls))
		for _, c := range m.ToolCalls {
			pending[c.ID] = true
		}
		var orphans []chatMessage
		for i+1 < len(msgs) && msgs[i+1].Role == "tool" {
			i++
			r := msgs[i]
			if pending[r.ToolCallID] {
				delete(pending, r.ToolCallID)
				out = append(out, r)
			} else {
				orphans = append(orphans, orphanResult(r))
			}
		}
		for _, c := range m.ToolCalls {
			if pending[c.ID] {
				out = append(out, chatMessage{Role: "tool", ToolCallID: c.ID, Content: "No result: the call was not run (the turn was interrupted)."})
			}
		}
		// Text goes after the run of tool messages, which must follow their call unbroken.
		out = append(out, orphans...)
	}
	return out
}

func orphanResult(m chatMessage) chatMessage {
	text, _ := m.Content.(string)
	return chatMessage{Role: "user", Content: "[result of an earlier tool call " + m.ToolCallID + "]\n" + text}
}

func assistantMessage(m providers.Message, opt options) (chatMessage, bool) {
	var text, thinking strings.Builder
	out := chatMessage{Role: "assistant"}
	for _, p := range m.Parts {
		switch p.Type {
		case providers.PartText:
			text.WriteString(p.Text)
		case providers.PartThinking:
			switch {
			case opt.openRouter:
				// OpenRouter wants reasoning_details back as they came, signatures included,
				// to continue a reasoning model's tool use.
				if p.Redacted != "" {
					out.ReasoningDetails = append(out.ReasoningDetails, reasoningDetail{Type: "reasoning.encrypted", Data: p.Redacted})
				} else if p.Text != "" || p.Signature != "" {
					out.ReasoningDetails = append(out.ReasoningDetails, reasoningDetail{Type: "reasoning.text", Text: p.Text, Signature: p.Signature})
				}
			case !opt.openAIHost:
				thinking.WriteString(p.Text)
			}
		case providers.PartToolCall:
			args := string(bytes.TrimSpace(p.Args))
			if args == "" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, chatToolCall{ID: p.ToolCallID, Type: "function", Function: chatCallFunction{Name: p.ToolName, Arguments: args}})
		}
	}
	// DeepSeek's thinking mode (and llama-server's templates) need the reasoning of a turn that
	// called tools sent back with it, or it answers 400; a turn without tool calls does not, and
	// its reasoning would only cost tokens.
	if len(out.ToolCalls) > 0 && !opt.drop["reasoning_content"] {
		out.ReasoningContent = thinking.String()
	}
	if text.Len() > 0 {
		out.Content = text.String()
	} else if len(out.ToolCalls) == 0 {
		return out, false // nothing to send: servers refuse an empty assistant message
	}
	return out, true
}

func userMessages(m providers.Message, opt options) []chatMessage {
	var out []chatMessage
	var parts []contentPart
	hasImage := false
	for _, p := range m.Parts {
		switch p.Type {
		case providers.PartToolResult:
			text := p.Text
			if p.IsError {
				text = "Error: " + text
			}
			out = append(out, chatMessage{Role: "tool", ToolCallID: p.ToolCallID, Content: text})
		case providers.PartText:
			parts = append(parts, contentPart{Type: "text", Text: p.Text})
		case providers.PartImage:
			hasImage = true
			parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: "data:" + p.MimeType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)}})
		}
	}
	if len(parts) == 0 {
		return out
	}
	var content any
	if hasImage {
		content = parts
	} else {
		// Plain text as a string: local servers' chat templates handle it best.
		var b strings.Builder
		for i, p := range parts {
			if i > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(p.Text)
		}
		content = b.String()
	}
	return append(out, chatMessage{Role: "user", Content: content})
}
