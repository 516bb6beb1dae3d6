package client

import (
	"encoding/json"
	"fmt"
)

// The protocol revisions this client speaks, newest first. The first is the one it asks for in
// initialize; a server may answer with any of them.
var versions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Info names a client or a server.
type Info struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitializeResult is the server's answer to initialize.
type InitializeResult struct {
	ProtocolVersion string        `json:"protocolVersion"`
	Capabilities    *Capabilities `json:"capabilities"`
	ServerInfo      *Info         `json:"serverInfo"`
	Instructions    string        `json:"instructions,omitempty"`
}

// Capabilities are the server's; a nil member is a feature the server does not offer.
type Capabilities struct {
	Tools   *ListChanged `json:"tools,omitempty"`
	Prompts *ListChanged `json:"prompts,omitempty"`
}

// ListChanged says whether the server sends a list_changed notification for a feature.
type ListChanged struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// Tool is one tool a server lists. InputSchema is the server's JSON, unchecked.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// Prompt is one prompt a server lists.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// CallToolResult is a tool's answer. StructuredContent is decoded as encoding/json decodes into
// any (objects become map[string]any).
type CallToolResult struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError,omitempty"`
}

// GetPromptResult is a prompt rendered with its arguments.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content kinds (the "type" of a content block).
const (
	KindText         = "text"
	KindImage        = "image"
	KindAudio        = "audio"
	KindResourceLink = "resource_link"
	KindResource     = "resource" // an embedded resource
)

// Content is one block of a result, of one of the kinds above; the fields a kind does not use
// are empty. Data (image, audio) arrives base64-encoded and is decoded here.
type Content struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	Data     []byte            `json:"data,omitempty"`
	MIMEType string            `json:"mimeType,omitempty"`
	URI      string            `json:"uri,omitempty"`  // resource_link
	Name     string            `json:"name,omitempty"` // resource_link
	Resource *ResourceContents `json:"resource,omitempty"`
}

// ResourceContents is an embedded resource: text or a base64 blob.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"`
}

type listToolsResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitempty"`
}

type listPromptsResult struct {
	Prompts    []Prompt `json:"prompts"`
	NextCursor string   `json:"nextCursor,omitempty"`
}

// JSON-RPC error codes this client sends or reads.
const (
	CodeMethodNotFound = -32601
	CodeParseError     = -32700
)

// Error is a JSON-RPC error a server answered with.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// message is any JSON-RPC message, read or written. A request has Method and ID, a
// notification Method only, a response ID and Result or Error.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// incoming is a message as read: params kept raw.
type incoming struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}
