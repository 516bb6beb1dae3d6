package session

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
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

// MCPServers lists the session's MCP servers for the clients (agent/x/mcp/servers): state,
// tools, resources.
func (m *Manager) MCPServers(ctx context.Context, p protocol.SessionIDParams) (protocol.MCPServersResult, error) {
	if err := checkRequired("sessionId", p.SessionID); err != nil {
		return protocol.MCPServersResult{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return protocol.MCPServersResult{}, err
	}
	s.mu.Lock()
	set := s.mcp
	s.mu.Unlock()
	res := protocol.MCPServersResult{Servers: []protocol.MCPServerInfo{}}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, sv := range set.Servers(lctx) {
		info := protocol.MCPServerInfo{Name: sv.Name, Type: sv.Type, Target: sv.Target, State: string(sv.State), Error: sv.Error, Auth: sv.Auth,
			Tools: []protocol.MCPToolInfo{}, Resources: []protocol.MCPResourceInfo{}}
		for _, t := range sv.Tools {
			info.Tools = append(info.Tools, protocol.MCPToolInfo{Name: t.Name, Description: t.Description, Offered: t.Offered})
		}
		for _, r := range sv.Resources {
			info.Resources = append(info.Resources, protocol.MCPResourceInfo{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MimeType: r.MimeType})
		}
		res.Servers = append(res.Servers, info)
	}
	return res, nil
}

// mcpSkills are the skills the session's ready MCP servers serve (Skills over MCP), named
// SERVER:NAME so that none takes the name of a skill on disk, loaded through their server.
func (s *Session) mcpSkills() []tools.Skill {
	s.mu.Lock()
	set := s.mcp
	s.mu.Unlock()
	if set == nil {
		return nil
	}
	var out []tools.Skill
	for _, sk := range set.Skills(context.Background()) {
		out = append(out, tools.Skill{Name: sk.Server + ":" + sk.Name, Description: sk.Description, Path: sk.URI,
			Dir: strings.TrimSuffix(sk.URI, "/SKILL.md"), Server: sk.Server, Project: true,
			Remote: func(ctx context.Context, rel string) (string, error) { return set.ReadSkill(ctx, sk, rel) }})
	}
	return out
}
