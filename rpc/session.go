package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentd-dev/agentd/rpc/protocol"
)

// manager returns the session manager, which initialize built (the lifecycle gate keeps every
// session method behind initialize).
func (s *Server) manager() Sessions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions
}

func required(field, v string) error {
	if v == "" {
		return paramError(field, "required")
	}
	return nil
}

func absPath(field, v string) error {
	if v == "" {
		return paramError(field, "required")
	}
	if !filepath.IsAbs(v) {
		return paramError(field, fmt.Sprintf("%q is not an absolute path", v))
	}
	return nil
}

func validateMCPServers(list []json.RawMessage) error {
	for i, raw := range list {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return paramError(fmt.Sprintf("mcpServers[%d]", i), "must be an object")
		}
		if _, ok := m["name"]; !ok {
			return paramError(fmt.Sprintf("mcpServers[%d].name", i), "required")
		}
	}
	return nil
}

func validateNew(p *protocol.SessionNewParams) error {
	if err := absPath("cwd", p.Cwd); err != nil {
		return err
	}
	for i, d := range p.AdditionalDirectories {
		if err := absPath(fmt.Sprintf("additionalDirectories[%d]", i), d); err != nil {
			return err
		}
	}
	return validateMCPServers(p.MCPServers)
}

func validateLoad(p *protocol.SessionLoadParams) error {
	if err := required("sessionId", p.SessionID); err != nil {
		return err
	}
	if err := absPath("cwd", p.Cwd); err != nil {
		return err
	}
	return validateMCPServers(p.MCPServers)
}

func validateList(p *protocol.SessionListParams) error {
	if p.Cwd != "" {
		return absPath("cwd", p.Cwd)
	}
	return nil
}

func validateSessionID(p *protocol.SessionIDParams) error { return required("sessionId", p.SessionID) }

func validateSetConfig(p *protocol.SetConfigOptionParams) error {
	if err := required("sessionId", p.SessionID); err != nil {
		return err
	}
	if err := required("configId", p.ConfigID); err != nil {
		return err
	}
	return required("value", p.Value)
}

// viaManager adapts a session-manager call to a handler.
func viaManager[P, R any](f func(m Sessions, ctx context.Context, p P) (R, error)) func(*Server, context.Context, *P) (R, error) {
	return func(s *Server, ctx context.Context, p *P) (R, error) {
		return f(s.manager(), ctx, *p)
	}
}

// listSessions answers an empty list as [], never null.
func listSessions(m Sessions, ctx context.Context, p protocol.SessionListParams) (protocol.SessionListResult, error) {
	res, err := m.List(ctx, p)
	if res.Sessions == nil {
		res.Sessions = []protocol.SessionInfo{}
	}
	return res, err
}

// empty is the {} result of close and delete.
type empty struct{}

func closeSession(m Sessions, ctx context.Context, p protocol.SessionIDParams) (empty, error) {
	return empty{}, m.Close(ctx, p.SessionID)
}

func deleteSession(m Sessions, ctx context.Context, p protocol.SessionIDParams) (empty, error) {
	return empty{}, m.Delete(ctx, p.SessionID)
}

// sessionCancel is the agent/session/cancel notification: inline, quick, never an error
// answer (there is no answer).
func (s *Server) sessionCancel(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.SessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	if err := validateSessionID(&p); err != nil {
		return err
	}
	s.cancelPrompts(p.SessionID)
	s.manager().Cancel(p.SessionID)
	return nil
}
