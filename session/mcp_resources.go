package session

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/agentd-dev/agentd/rpc/protocol"
)

// mcpLinkServer is the MCP server a prompt's resource_link names: the block's
// _meta["agentd/mcpServer"] (what the clients' @server:uri mention sends), or else, for a uri
// that is not a file path (no scheme, or file:), the one server that lists it. "" is a file of
// the workspace, read as before: a server cannot take a path over by listing it.
func (t *turn) mcpLinkServer(b protocol.ContentBlock) string {
	if name, ok := b.Meta[protocol.MetaMCPServer].(string); ok && name != "" {
		return name
	}
	u, err := url.Parse(b.URI)
	if err != nil || u.Scheme == "" || u.Scheme == "file" || len(u.Scheme) == 1 { // C:\… on Windows
		return ""
	}
	t.s.mu.Lock()
	set := t.s.mcp
	t.s.mu.Unlock()
	if set == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
	defer cancel()
	return set.ServerOf(ctx, b.URI)
}

// readMCPLink reads a resource_link's resource on its server, framed as the server's data.
func (t *turn) readMCPLink(server string, b protocol.ContentBlock) string {
	t.s.mu.Lock()
	set := t.s.mcp
	t.s.mu.Unlock()
	ctx, cancel := context.WithTimeout(t.ctx, 30*time.Second)
	defer cancel()
	text, err := set.ReadResource(ctx, server, b.URI)
	if err != nil {
		return fmt.Sprintf("<mcp_resource server=%q uri=%q>The resource could not be read: %s</mcp_resource>", server, b.URI, escapeEnvelope(err.Error()))
	}
	return text
}
