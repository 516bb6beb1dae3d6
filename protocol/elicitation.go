package protocol

import "encoding/json"

// MethodElicitationCreate asks the user an MCP server's question during a tool call (agentd →
// client; ACP v1's elicitation/create, with the agent/ prefix of the LSP door).
const MethodElicitationCreate = "agent/elicitation/create"

// ElicitationCapabilities are the client's clientCapabilities.elicitation (ACP v1's shape): an
// object for each mode it shows, form and url.
type ElicitationCapabilities struct {
	Form *struct{} `json:"form,omitempty"`
	URL  *struct{} `json:"url,omitempty"`
}

// ElicitationParams are agent/elicitation/create's: session-scoped, tied to the tool call that
// the server asked during; a form (requestedSchema, a flat object of primitive properties) or a
// link (url, elicitationId). _meta["agentd/mcpServer"] names the server.
type ElicitationParams struct {
	SessionID       string          `json:"sessionId"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	Meta            Meta            `json:"_meta,omitempty"`
}

// ElicitationResult is the user's answer: action accept (content: the form's values), decline or
// cancel.
type ElicitationResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}
