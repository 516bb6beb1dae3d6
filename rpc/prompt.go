package rpc

import (
	"context"
	"errors"

	"github.com/agentd-dev/agentd/protocol"
)

// prompt runs a turn. The request's context is cancelled by $/cancelRequest, which the manager
// treats as agent/session/cancel: the answer is still a result, stopReason "cancelled".
func prompt(m Sessions, ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
	if errors.Is(context.Cause(ctx), errSessionCancel) {
		// Cancelled before it reached the manager: it never starts.
		return protocol.PromptResult{StopReason: protocol.StopCancelled, Usage: &protocol.Usage{}}, nil
	}
	return m.Prompt(ctx, p)
}
