package protocol

// MCP sign-in (docs/protocol.md "MCP sign-in"): a server that needs the user to sign in is said
// by a notice carrying MetaMCPSignIn; the client's "Sign in" action calls MethodMCPSignIn, during
// which agentd asks the client to open the authorization URL (MethodShowDocument, external).
// When the browser cannot reach agentd's loopback callback (a remote editor), the client hands
// the address the browser ended on to MethodMCPCompleteSignIn; MethodMCPSignOut forgets the
// server's tokens.
const (
	MethodMCPSignIn         = "agent/mcp/signIn"
	MethodMCPCompleteSignIn = "agent/x/mcp/completeSignIn"
	MethodMCPSignOut        = "agent/x/mcp/signOut"
	MethodShowDocument      = "window/showDocument"
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

// MCPCompleteSignInParams are agent/x/mcp/completeSignIn's params: CallbackURL is the address
// the browser ended on (agentd's http://127.0.0.1:PORT/oauth/callback?code=...&state=...). The
// answer is MCPSignInResult once the sign-in ended with the server's token.
type MCPCompleteSignInParams struct {
	SessionID   string `json:"sessionId"`
	Server      string `json:"server"`
	CallbackURL string `json:"callbackUrl"`
}

// MCPSignOutParams are agent/x/mcp/signOut's params.
type MCPSignOutParams struct {
	SessionID string `json:"sessionId"`
	Server    string `json:"server"`
}

// MCPSignOutResult says whether any tokens were kept for the server.
type MCPSignOutResult struct {
	Server    string `json:"server"`
	HadTokens bool   `json:"hadTokens"`
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
