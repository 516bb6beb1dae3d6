package protocol

// MCP sign-in (docs/protocol.md "MCP sign-in"): a server that needs the user to sign in is said
// by a notice carrying MetaMCPSignIn; the client's "Sign in" action calls MethodMCPSignIn, during
// which agentd asks the client to open the authorization URL (MethodShowDocument, external).
const (
	MethodMCPSignIn    = "agent/mcp/signIn"
	MethodShowDocument = "window/showDocument"
	// MetaMCPSignIn is the notice's _meta key: {"server": NAME}.
	MetaMCPSignIn = "agentd/mcpSignIn"
)

// MCPSignInParams are agent/mcp/signIn's params.
type MCPSignInParams struct {
	SessionID string `json:"sessionId"`
	Server    string `json:"server"`
}

// MCPSignInResult is its answer: the server signed in and is starting again.
type MCPSignInResult struct {
	Server string `json:"server"`
}

// ShowDocumentParams are LSP window/showDocument's params as agentd sends them.
type ShowDocumentParams struct {
	URI      string `json:"uri"`
	External bool   `json:"external,omitempty"`
}

// ShowDocumentResult is its answer.
type ShowDocumentResult struct {
	Success bool `json:"success"`
}
