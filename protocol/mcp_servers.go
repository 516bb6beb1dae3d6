package protocol

// MethodMCPServers lists a session's MCP servers for the clients' lists and @ completion
// (client → agentd): {sessionId} → MCPServersResult.
const MethodMCPServers = "agent/x/mcp/servers"

// MCPServersResult is each of the session's MCP servers, in order.
type MCPServersResult struct {
	Servers []MCPServerInfo `json:"servers"`
}

// MCPServerInfo is one server: its state (starting, ready, failed, down), the error that keeps it
// down, its tools and its resources.
type MCPServerInfo struct {
	Name   string `json:"name"`
	Type   string `json:"type"` // stdio, http, sse
	Target string `json:"target"`
	State  string `json:"state"`
	Error  string `json:"error,omitempty"`
	// Auth is "needed" (offer Sign in) or "signedIn" (offer Sign out) for a server that signs in.
	Auth      string            `json:"auth,omitempty"`
	Tools     []MCPToolInfo     `json:"tools"`
	Resources []MCPResourceInfo `json:"resources"`
}

// MCPToolInfo is one tool of a server; offered says it reaches the model.
type MCPToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Offered     bool   `json:"offered"`
}

// MCPResourceInfo is one resource of a server, mentioned in a prompt as a resource_link with its
// uri and _meta["agentd/mcpServer"].
type MCPResourceInfo struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}
