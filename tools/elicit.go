package tools

import (
	"context"
	"encoding/json"
)

// Elicitation is a question a tool's MCP server asks the user during a call (MCP elicitation):
// a form (Schema, a flat JSON object schema of strings, numbers, booleans and enums) or a link
// to open (URL, with the server's ElicitationID). Every string is the server's, cleaned.
type Elicitation struct {
	Server  string
	Mode    string // "form" or "url"
	Message string
	Schema  json.RawMessage
	URL     string
	ID      string
}

// ElicitAnswer is the user's answer: Action "accept" (with Content for a form), "decline" or
// "cancel".
type ElicitAnswer struct {
	Action  string
	Content map[string]any
}

// Elicit asks the user a server's question; nil (no client that can show it) declines.
type Elicit func(ctx context.Context, q Elicitation) (ElicitAnswer, error)
