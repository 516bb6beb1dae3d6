// Package providers owns the provider-neutral streaming model: the request the agent loop builds
// (system prompt, history of messages made of typed parts, tool specs, limits, thinking), the one
// flat event type every wire dialect normalizes its stream into, the error kinds a provider
// failure is classified as, and the registry of dialects: one Dialect descriptor per wire dialect
// from which default base URLs, key variables, presets and the endpoint rules are derived. Each
// wire dialect lives in a package of its own below this one; only cmd/agentd names them. Keys and
// where they are kept are providers/keys.
package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"time"
)

// Role is who authored a message. Tool results travel in user messages, as Anthropic models them;
// dialects that have a separate tool role map them there.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PartType discriminates the content of a Part.
type PartType string

const (
	PartText       PartType = "text"
	PartImage      PartType = "image"
	PartThinking   PartType = "thinking"
	PartToolCall   PartType = "tool_call"
	PartToolResult PartType = "tool_result"
)

// Part is one piece of a message. Only the fields of its Type are set.
type Part struct {
	Type PartType `json:"type"`

	// Text is the text of a text part, the reasoning of a thinking part, or the output of a tool
	// result.
	Text string `json:"text,omitempty"`
	// Signature is the opaque signature a provider attached to a thinking part (Anthropic's
	// signature) or to a tool call (Gemini's thoughtSignature). It must be sent back verbatim.
	Signature string `json:"signature,omitempty"`
	// Redacted holds the opaque data of a redacted thinking block; it has no readable text.
	Redacted string `json:"redacted,omitempty"`

	// MimeType and Data carry an image.
	MimeType string `json:"mimeType,omitempty"`
	Data     []byte `json:"data,omitempty"`

	// ToolCallID, ToolName and Args describe a tool call; ToolCallID and ToolName also tie a
	// tool result to its call. An image part with a ToolCallID belongs to that call's result; it
	// follows all the message's tool results.
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"isError,omitempty"`
}

// Message is one turn of the conversation.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// ToolSpec declares a tool the model may call. Schema is a JSON Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// Thinking asks for visible reasoning. BudgetTokens 0 means the provider's default.
type Thinking struct {
	Enabled      bool `json:"enabled"`
	BudgetTokens int  `json:"budgetTokens,omitempty"`
}

// Request is everything a provider needs for one model call.
type Request struct {
	Model string
	// System is the stable part of the system prompt; it changes rarely, so providers put their
	// cache breakpoint after it.
	System string
	// Context is the live part (roots, open files, diagnostics) sent after System.
	Context  string
	Messages []Message
	// Stable, when above 0, says that Messages[:Stable] will be sent unchanged in the session's
	// next requests, whereas a later message may be rewritten (the engine shortens older tool
	// results in blocks): a dialect with explicit cache breakpoints puts one on the last of
	// them, so that the cache still serves that prefix after the rewrite. Advice only; a value
	// past the messages means none.
	Stable    int
	Tools     []ToolSpec
	MaxTokens int
	Thinking  Thinking
	// Temperature is optional; reasoning models that refuse it get none.
	Temperature *float64
	// ResponseSchema, when set, is a JSON Schema the whole reply must match. A provider whose
	// server can enforce one while sampling (OutputSchema) sends it; the others ignore it, so a
	// caller reads the reply as if it might not match.
	ResponseSchema json.RawMessage
}

// EventType discriminates an Event.
type EventType uint8

const (
	EventTextDelta EventType = iota + 1
	EventThinkingDelta
	EventToolCallStarted
	EventToolCallArgsDelta
	EventToolCallCompleted
	EventUsage
	EventCompleted
	EventFailed
	// EventNotice carries something the user should know that does not end the stream: a retry,
	// a dropped malformed tool call, a fallback.
	EventNotice
)

func (t EventType) String() string {
	switch t {
	case EventTextDelta:
		return "text_delta"
	case EventThinkingDelta:
		return "thinking_delta"
	case EventToolCallStarted:
		return "tool_call_started"
	case EventToolCallArgsDelta:
		return "tool_call_args_delta"
	case EventToolCallCompleted:
		return "tool_call_completed"
	case EventUsage:
		return "usage"
	case EventCompleted:
		return "completed"
	case EventFailed:
		return "failed"
	case EventNotice:
		return "notice"
	}
	return fmt.Sprintf("event(%d)", t)
}

// StopReason is why the model stopped, normalized across dialects.
type StopReason string

const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
	StopUnknown   StopReason = "unknown"
)

// Usage counts tokens of one model call. Input excludes cache reads and writes where the
// provider reports them apart.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty"`
	Thinking   int `json:"thinking,omitempty"`
}

// Event is the one flat type every dialect's stream is normalized into. Only the fields of its
// Type are set:
//
//	TextDelta, ThinkingDelta: Text (and Signature, Redacted for thinking)
//	ToolCallStarted:          Index, ToolCallID, ToolName
//	ToolCallArgsDelta:        Index, ToolCallID, Text (a fragment of the JSON arguments)
//	ToolCallCompleted:        Index, ToolCallID, ToolName, Args (whole, valid JSON), Signature
//	Usage:                    Usage (cumulative for the call)
//	Completed:                StopReason
//	Failed:                   Err
//	Notice:                   Text (plus Index, ToolCallID, ToolName when it reports that a
//	                          started tool call was dropped: no name, or arguments that are not
//	                          a JSON object; no ToolCallCompleted follows for that call)
//
// A stream ends with exactly one Completed or Failed event.
type Event struct {
	Type       EventType
	Text       string
	Signature  string
	Redacted   string
	Index      int
	ToolCallID string
	ToolName   string
	Args       json.RawMessage
	Usage      Usage
	StopReason StopReason
	Err        *Error
}

// Provider streams one model call. The returned sequence yields events until one Completed or
// Failed event; breaking out of the range, or cancelling ctx, closes the underlying connection.
type Provider interface {
	Stream(ctx context.Context, req *Request) iter.Seq[Event]
}

// ModelLister is implemented by providers that can list their models; it backs
// agent/providers/test.
type ModelLister interface {
	ListModels(ctx context.Context) ([]string, error)
}

// Config is a provider's resolved configuration: what the settings say plus the key that was
// found for its origin. APIKey is empty when none is needed or none was found.
type Config struct {
	ID      string
	APIType string
	BaseURL string
	Model   string
	APIKey  string
	Headers map[string]string
	// FirstByteTimeout is how long a request waits for the server to start answering; 0 means
	// the transport's default.
	FirstByteTimeout time.Duration
	// OutputSchema is how the server takes Request.ResponseSchema (OutputSchemaJSONSchema,
	// OutputSchemaResponseFormat), OutputSchemaOff for never, "" for the dialect's own choice
	// (its preset's, for a server it knows).
	OutputSchema string
}

// The ways a server takes a JSON Schema that constrains its output (Config.OutputSchema).
const (
	// OutputSchemaJSONSchema: llama.cpp's llama-server, a top-level "json_schema" field that
	// its sampler turns into a grammar (tools/server/README.md, "json_schema").
	OutputSchemaJSONSchema = "json_schema"
	// OutputSchemaResponseFormat: OpenAI's structured outputs, response_format {type:
	// "json_schema", json_schema: {name, schema}}, which Ollama's /v1 maps to its format field.
	OutputSchemaResponseFormat = "response_format"
	// OutputSchemaOff: never send one.
	OutputSchemaOff = "off"
)

// ErrorKind classifies a provider failure so the loop and the user know what to do about it.
type ErrorKind string

const (
	ErrAuth            ErrorKind = "auth"
	ErrPermission      ErrorKind = "permission"
	ErrRateLimit       ErrorKind = "rate_limit"
	ErrQuota           ErrorKind = "quota"
	ErrOverloaded      ErrorKind = "overloaded"
	ErrContextOverflow ErrorKind = "context_overflow"
	ErrInvalidRequest  ErrorKind = "invalid_request"
	ErrNotFound        ErrorKind = "not_found"
	ErrContentFilter   ErrorKind = "content_filter"
	ErrServer          ErrorKind = "server"
	ErrNetwork         ErrorKind = "network"
	ErrCancelled       ErrorKind = "cancelled"
)

// Error is a classified provider failure. Message is one sentence a user can act on; Detail is
// the provider's own text, for logs and traces.
type Error struct {
	Kind       ErrorKind
	Message    string
	Detail     string
	Status     int
	RequestID  string
	RetryAfter time.Duration
	// Param names the request parameter a 400 complained about, when the body says so.
	Param string
	// ToolsRefused is set by a dialect when the server (or the model behind it) refused the
	// request's native tools declaration; the agent loop then goes on with the text tool-call
	// protocol, which needs no tools declaration, and remembers it for the origin and model.
	ToolsRefused bool
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Retryable reports whether the same request may succeed later.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimit, ErrOverloaded, ErrNetwork:
		return true
	case ErrServer:
		return e.Status >= 500
	}
	return false
}
