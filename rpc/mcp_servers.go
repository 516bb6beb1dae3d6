package rpc

import (
	"context"
	"errors"

	"github.com/agentd-dev/agentd/protocol"
)

// mcpServerLister is the manager's listing of a session's MCP servers (session.Manager).
type mcpServerLister interface {
	MCPServers(ctx context.Context, p protocol.SessionIDParams) (protocol.MCPServersResult, error)
}

func (s *Server) mcpServers(ctx context.Context, p *protocol.SessionIDParams) (protocol.MCPServersResult, error) {
	m, ok := s.manager().(mcpServerLister)
	if !ok {
		return protocol.MCPServersResult{}, errors.New("this agentd does not list MCP servers")
	}
	return m.MCPServers(ctx, *p)
}
