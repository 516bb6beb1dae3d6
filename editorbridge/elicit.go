package editorbridge

import (
	"context"
	"fmt"

	"github.com/agentd-dev/agentd/protocol"
)

// CanElicit reports whether the client shows an MCP server's question of mode ("form" or "url"):
// it advertised clientCapabilities.elicitation.<mode>.
func (c *Client) CanElicit(mode string) bool {
	e := c.b.caps.Agent.Elicitation
	switch {
	case e == nil:
		return false
	case mode == "form":
		return e.Form != nil
	case mode == "url":
		return e.URL != nil
	}
	return false
}

// Elicit asks the user an MCP server's question (agent/elicitation/create; ACP's
// elicitation/create on the ACP door). On the LSP door a link the user agreed to open is opened
// by agentd, with window/showDocument {external: true}; an ACP client opens it itself, as ACP's
// URL mode says. A context that ends answers cancel with the context's error.
func (c *Client) Elicit(ctx context.Context, p protocol.ElicitationParams) (protocol.ElicitationResult, error) {
	cancel := protocol.ElicitationResult{Action: "cancel"}
	var res protocol.ElicitationResult
	if err := c.b.conn.Call(ctx, protocol.MethodElicitationCreate, p, &res); err != nil {
		if ctx.Err() != nil {
			return cancel, ctx.Err()
		}
		return cancel, fmt.Errorf("asking the editor the MCP server's question: %w", err)
	}
	switch res.Action {
	case "accept", "decline", "cancel":
	default:
		return cancel, fmt.Errorf("the editor answered an unknown action %q", res.Action)
	}
	if p.Mode != "url" || res.Action != "accept" || c.b.caps.ACP {
		return res, nil
	}
	served, err := c.ShowDocument(ctx, p.URL)
	if err == nil && !served {
		err = fmt.Errorf("it does not open links (window/showDocument)")
	}
	if err != nil {
		return cancel, fmt.Errorf("the editor could not open the link %s: %w", p.URL, err)
	}
	return res, nil
}
