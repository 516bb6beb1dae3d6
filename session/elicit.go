package session

import (
	"context"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
)

// Elicitor is a Client that shows an MCP server's questions to the user (the editor bridge);
// a Client that is not one declines them all.
type Elicitor interface {
	CanElicit(mode string) bool
	Elicit(ctx context.Context, p protocol.ElicitationParams) (protocol.ElicitationResult, error)
}

var declined = tools.ElicitAnswer{Action: "decline"}

// elicitFor is the Env.Elicit of call c: the question goes to the session's client, tied to the
// call, unless the session is in plan mode (nothing a server asks for runs there) or the client
// does not show that mode; both decline without asking.
func (t *turn) elicitFor(c *call) tools.Elicit {
	el, ok := t.s.m.d.Client.(Elicitor)
	if !ok {
		return nil
	}
	return func(ctx context.Context, q tools.Elicitation) (tools.ElicitAnswer, error) {
		if t.s.currentMode() == ModePlan || !el.CanElicit(q.Mode) {
			return declined, nil
		}
		t.s.m.trace.event(t.s.id, "elicitation", map[string]any{"id": c.id, "server": q.Server, "mode": q.Mode})
		res, err := el.Elicit(ctx, protocol.ElicitationParams{SessionID: t.s.id, ToolCallID: c.id, Mode: q.Mode, Message: q.Message,
			RequestedSchema: q.Schema, URL: q.URL, ElicitationID: q.ID, Meta: protocol.Meta{protocol.MetaMCPServer: q.Server}})
		if err != nil {
			return tools.ElicitAnswer{Action: "cancel"}, err
		}
		return tools.ElicitAnswer{Action: res.Action, Content: res.Content}, nil
	}
}
