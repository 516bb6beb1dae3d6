package term

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
)

// TestErrorPrintedOnce: the session sends a failed turn's error as a notice and in the result;
// the terminal shows the message once, and the result line adds its kind.
func TestErrorPrintedOnce(t *testing.T) {
	var out bytes.Buffer
	c := New(Options{Out: &out, Err: &out, In: strings.NewReader("")})
	msg := `provider "anthropic" needs an API key for https://api.anthropic.com and none was found`
	c.Update("s", protocol.SessionUpdate{SessionUpdate: protocol.UpdateNotice, Severity: protocol.SeverityError, NoticeTitle: "The model request failed: " + msg})
	c.Result(protocol.PromptResult{StopReason: protocol.StopEndTurn, Meta: protocol.Meta{"agentd/error": protocol.ErrorMeta{Kind: "auth", Message: msg}}})
	if n := strings.Count(out.String(), msg); n != 1 {
		t.Fatalf("the error is printed %d times:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "the auth error above") {
		t.Fatalf("the kind is not named:\n%s", out.String())
	}
	// Without the notice, the result says it all.
	out.Reset()
	c = New(Options{Out: &out, Err: &out, In: strings.NewReader("")})
	c.Result(protocol.PromptResult{StopReason: protocol.StopEndTurn, Meta: protocol.Meta{"agentd/error": protocol.ErrorMeta{Kind: "invalid_request", Message: "bad base URL"}}})
	if !strings.Contains(out.String(), "the model request failed (invalid_request): bad base URL") {
		t.Fatalf("result:\n%s", out.String())
	}
}
