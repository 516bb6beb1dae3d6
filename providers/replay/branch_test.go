package replay

import (
	"context"
	"testing"

	"github.com/agentd-dev/agentd/providers"
)

// TestOnToolErrorBranchesOnTheLastResults: the demo must not claim a fix the user refused.
func TestOnToolErrorBranchesOnTheLastResults(t *testing.T) {
	s := &Script{Responses: []Response{
		{Text: "It is fixed.", OnToolError: &Response{Text: "The edit was refused; nothing changed."}},
	}}
	text := func(results ...providers.Part) string {
		req := &providers.Request{Tools: toolReq.Tools, Messages: []providers.Message{
			{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "fix it"}}},
			{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartToolCall, ToolCallID: "c1", ToolName: "edit_file"}}},
			{Role: providers.RoleUser, Parts: results},
		}}
		var out string
		for _, ev := range collect(t, NewFromScript(s), context.Background(), req) {
			if ev.Type == providers.EventTextDelta {
				out += ev.Text
			}
		}
		return out
	}
	ok := providers.Part{Type: providers.PartToolResult, ToolCallID: "c1", Text: "Edited."}
	refused := providers.Part{Type: providers.PartToolResult, ToolCallID: "c2", Text: "The user rejected this call.", IsError: true}
	if got := text(ok); got != "It is fixed." {
		t.Errorf("after a success: %q", got)
	}
	if got := text(ok, refused); got != "The edit was refused; nothing changed." {
		t.Errorf("after a refusal: %q", got)
	}
}
