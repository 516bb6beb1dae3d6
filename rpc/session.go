package rpc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentd-dev/agentd/protocol"
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
func (s *Server) sessionCancel(_ context.Context, raw json.RawMessage) error {
	var p protocol.SessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return err // logged: a notification has no answer
	}
	s.cancelPrompts(p.SessionID)
	s.manager().Cancel(p.SessionID)
	return nil
}

// mcpSigner is the manager's MCP sign-in (session.Manager; a test's fake may lack it).
type mcpSigner interface {
	MCPSignIn(ctx context.Context, p protocol.MCPSignInParams) (protocol.MCPSignInResult, error)
}

func mcpSignIn(m Sessions, ctx context.Context, p protocol.MCPSignInParams) (protocol.MCPSignInResult, error) {
	ms, ok := m.(mcpSigner)
	if !ok {
		return protocol.MCPSignInResult{}, errors.New("MCP sign-in is not served by this engine")
	}
	return ms.MCPSignIn(ctx, p)
}

// mcpCompleter and mcpSignerOut are the manager's pasted sign-in answer and sign-out.
type mcpCompleter interface {
	MCPCompleteSignIn(ctx context.Context, p protocol.MCPCompleteSignInParams) (protocol.MCPSignInResult, error)
}

type mcpSignerOut interface {
	MCPSignOut(ctx context.Context, p protocol.MCPSignOutParams) (protocol.MCPSignOutResult, error)
}

func mcpCompleteSignIn(m Sessions, ctx context.Context, p protocol.MCPCompleteSignInParams) (protocol.MCPSignInResult, error) {
	mc, ok := m.(mcpCompleter)
	if !ok {
		return protocol.MCPSignInResult{}, errors.New("MCP sign-in is not served by this engine")
	}
	return mc.MCPCompleteSignIn(ctx, p)
}

func mcpSignOut(m Sessions, ctx context.Context, p protocol.MCPSignOutParams) (protocol.MCPSignOutResult, error) {
	mo, ok := m.(mcpSignerOut)
	if !ok {
		return protocol.MCPSignOutResult{}, errors.New("MCP sign-out is not served by this engine")
	}
	return mo.MCPSignOut(ctx, p)
}
