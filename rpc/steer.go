package rpc

import (
	"context"

	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/session"
)

// MethodSessionSteer adds a user message to the running turn (contract section "Steering"); the
// ACP door spells it _agentd/session/steer.
const MethodSessionSteer = "agent/x/session/steer"

// steerer is the session manager's steering, which session.Manager implements.
type steerer interface {
	Steer(ctx context.Context, p protocol.PromptParams) (session.SteerResult, error)
}

// steer answers {accepted}: true when the message joins the running turn at its next step
// boundary, false (doing nothing) when no turn runs.
func (s *Server) steer(ctx context.Context, p *protocol.PromptParams) (session.SteerResult, error) {
	st, ok := s.manager().(steerer)
	if !ok {
		return session.SteerResult{}, jsonrpc.NewError(jsonrpc.MethodNotFound, "method not found: "+MethodSessionSteer)
	}
	return st.Steer(ctx, *p)
}
