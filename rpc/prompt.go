package rpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentd-dev/agentd/rpc/protocol"
)

func validatePrompt(p *protocol.PromptParams) error {
	if err := required("sessionId", p.SessionID); err != nil {
		return err
	}
	if len(p.Prompt) == 0 {
		return paramError("prompt", "must hold at least one content block")
	}
	for i, b := range p.Prompt {
		f := func(name string) string { return fmt.Sprintf("prompt[%d].%s", i, name) }
		switch b.Type {
		case "text":
		case "image":
			if b.MimeType == "" {
				return paramError(f("mimeType"), "required for an image")
			}
			if b.Data == "" {
				return paramError(f("data"), "required for an image")
			}
		case "resource_link":
			if b.URI == "" {
				return paramError(f("uri"), "required for a resource_link")
			}
			if b.Name == "" {
				return paramError(f("name"), "required for a resource_link")
			}
		case "resource":
			if b.Resource == nil {
				return paramError(f("resource"), "required for a resource block")
			}
			if b.Resource.URI == "" {
				return paramError(f("resource.uri"), "required")
			}
		case "audio":
			return paramError(f("type"), "audio is not supported (promptCapabilities.audio is false)")
		case "":
			return paramError(f("type"), "required")
		default:
			return paramError(f("type"), fmt.Sprintf("%q is not one of text, image, resource_link, resource", b.Type))
		}
	}
	return nil
}

// prompt runs a turn. The request's context is cancelled by $/cancelRequest, which the manager
// treats as agent/session/cancel: the answer is still a result, stopReason "cancelled".
func prompt(m Sessions, ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
	if errors.Is(context.Cause(ctx), errSessionCancel) {
		// Cancelled before it reached the manager: it never starts.
		return protocol.PromptResult{StopReason: protocol.StopCancelled, Usage: &protocol.Usage{}}, nil
	}
	return m.Prompt(ctx, p)
}
