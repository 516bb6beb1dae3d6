package session

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

var hookNames = map[loopHook]string{
	hookCompact: "compact", hookTextStep: "textStep", hookCancelled: "cancelled",
	hookSteerOrEnd: "steerOrEnd", hookSteer: "steer", hookTextUnfinished: "textUnfinished",
	hookTruncated: "truncated", hookRequiredTool: "requiredTool", hookUnfinished: "unfinished",
	hookStopHooks: "stopHooks", hookReview: "review", hookRunCutCalls: "runCutCalls", hookTruncatedCalls: "truncatedCalls",
	hookRunCalls: "runCalls", hookRefreshLive: "refreshLive",
}

// decide drives whatNext as afterStep does, with yes the hooks that answer yes and callsAfter
// the calls left once hookTextStep ran (-1: unchanged). It returns the hooks asked, in order,
// and the decision, failing on a hook asked twice.
func decide(t *testing.T, f stepFacts, yes []loopHook, callsAfter int) ([]string, nextStep) {
	t.Helper()
	var asked []string
	for range 32 {
		n := whatNext(f)
		if n.hook == 0 {
			return asked, n
		}
		if f.asked.has(n.hook) {
			t.Fatalf("whatNext asked %s twice (after %v)", hookNames[n.hook], asked)
		}
		asked = append(asked, hookNames[n.hook])
		f.asked |= loopHooks(n.hook)
		if slices.Contains(yes, n.hook) {
			f.yes |= loopHooks(n.hook)
		}
		if n.hook == hookTextStep && callsAfter >= 0 {
			f.calls = callsAfter
		}
	}
	t.Fatalf("whatNext did not decide after 32 hooks: %v", asked)
	return nil, nextStep{}
}

func (n nextStep) String() string {
	switch {
	case n.again:
		return "again"
	case n.fail:
		return "fail"
	}
	return "end " + n.stop
}

// TestWhatNext is the loop's stopping rule, row by row: what a step produced, which hooks
// answer yes, the hooks the loop asks in order, and the decision.
func TestWhatNext(t *testing.T) {
	const (
		endTurn   = providers.StopEndTurn
		maxTokens = providers.StopMaxTokens
		refusal   = providers.StopRefusal
		toolUse   = providers.StopToolUse
	)
	for _, c := range []struct {
		name       string
		f          stepFacts
		yes        []loopHook
		callsAfter int // calls left once textStep ran; -1 unchanged
		asked      string
		want       string
	}{
		// Native tool calls: an answer.
		{"answer ends the turn after the nudges and the review", stepFacts{stop: endTurn}, nil, -1,
			"steerOrEnd requiredTool unfinished stopHooks review", "end " + protocol.StopEndTurn},
		{"a stop hook asks for one more step", stepFacts{stop: endTurn}, []loopHook{hookStopHooks}, -1,
			"steerOrEnd requiredTool unfinished stopHooks", "again"},
		{"a steer waiting when the model answered", stepFacts{stop: endTurn}, []loopHook{hookSteerOrEnd}, -1,
			"steerOrEnd", "again"},
		{"a tool call written out as text", stepFacts{stop: endTurn}, []loopHook{hookRequiredTool}, -1,
			"steerOrEnd requiredTool", "again"},
		{"tools ran and the model stopped without an answer", stepFacts{stop: endTurn}, []loopHook{hookUnfinished}, -1,
			"steerOrEnd requiredTool unfinished", "again"},
		{"cut at the output limit, first time", stepFacts{stop: maxTokens}, []loopHook{hookTruncated}, -1,
			"truncated", "again"},
		{"cut at the output limit again", stepFacts{stop: maxTokens}, nil, -1,
			"truncated", "end " + protocol.StopMaxTokens},
		{"cut at the output limit with a steer waiting: the steer waits", stepFacts{stop: maxTokens}, []loopHook{hookSteerOrEnd}, -1,
			"truncated", "end " + protocol.StopMaxTokens},
		{"refusal", stepFacts{stop: refusal}, []loopHook{hookSteerOrEnd, hookUnfinished}, -1,
			"", "end " + protocol.StopRefusal},

		// The stream's own end.
		{"cancelled stream", stepFacts{cancelled: true, stop: endTurn}, nil, -1, "", "end " + protocol.StopCancelled},
		{"failed stream", stepFacts{failed: true}, nil, -1, "", "fail"},
		{"context overflow compacted", stepFacts{overflow: true, failed: true}, []loopHook{hookCompact}, -1,
			"compact", "again"},
		{"context overflow that cannot be compacted", stepFacts{overflow: true, failed: true}, nil, -1,
			"compact", "fail"},
		{"context overflow, cancelled meanwhile", stepFacts{overflow: true, failed: true, cancelled: true}, nil, -1,
			"compact", "end " + protocol.StopCancelled},

		// Calls.
		{"calls ran, nothing changed", stepFacts{stop: toolUse, calls: 2}, nil, -1,
			"runCalls cancelled steer", "again"},
		{"calls ran and changed a file", stepFacts{stop: toolUse, calls: 1}, []loopHook{hookRunCalls, hookSteer}, -1,
			"runCalls cancelled refreshLive steer", "again"},
		{"cancelled while the calls ran", stepFacts{stop: toolUse, calls: 1}, []loopHook{hookRunCalls, hookCancelled}, -1,
			"runCalls cancelled", "end " + protocol.StopCancelled},
		{"calls cut at the output limit, first time", stepFacts{stop: maxTokens, calls: 1}, []loopHook{hookTruncatedCalls}, -1,
			"runCutCalls cancelled truncatedCalls", "again"},
		{"calls cut at the output limit again", stepFacts{stop: maxTokens, calls: 1}, nil, -1,
			"runCutCalls cancelled truncatedCalls", "end " + protocol.StopMaxTokens},
		{"calls cut, cancelled meanwhile", stepFacts{stop: maxTokens, calls: 1}, []loopHook{hookCancelled, hookTruncatedCalls}, -1,
			"runCutCalls cancelled", "end " + protocol.StopMaxTokens},

		// The text protocol.
		{"text: answered through respond", stepFacts{text: true, stop: endTurn, calls: 1}, []loopHook{hookTextStep}, 0,
			"textStep cancelled steerOrEnd", "end " + protocol.StopEndTurn},
		{"text: answered, a steer waiting", stepFacts{text: true, stop: endTurn, calls: 1}, []loopHook{hookTextStep, hookSteerOrEnd}, 0,
			"textStep cancelled steerOrEnd", "again"},
		{"text: answered, cancelled meanwhile", stepFacts{text: true, stop: endTurn, calls: 1}, []loopHook{hookTextStep, hookCancelled}, 0,
			"textStep cancelled", "end " + protocol.StopCancelled},
		{"text: neither a call nor respond, a steer waiting", stepFacts{text: true, stop: endTurn}, []loopHook{hookSteer}, -1,
			"textStep steer", "again"},
		{"text: neither a call nor respond, nudged", stepFacts{text: true, stop: endTurn}, []loopHook{hookTextUnfinished}, -1,
			"textStep steer textUnfinished", "again"},
		{"text: neither, nudges spent: no required_tool nudge", stepFacts{text: true, stop: endTurn}, nil, -1,
			"textStep steer textUnfinished steerOrEnd unfinished stopHooks review", "end " + protocol.StopEndTurn},
		{"text: calls and no respond", stepFacts{text: true, stop: endTurn, calls: 2}, nil, -1,
			"textStep runCalls cancelled steer", "again"},
		{"text: cut at the output limit", stepFacts{text: true, stop: maxTokens}, nil, -1,
			"textStep truncated", "end " + protocol.StopMaxTokens},
		{"text: respond with other calls cut at the output limit", stepFacts{text: true, stop: maxTokens, calls: 2}, []loopHook{hookTextStep}, 0,
			"textStep cancelled steerOrEnd", "end " + protocol.StopEndTurn},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked, n := decide(t, c.f, c.yes, c.callsAfter)
			if got := strings.Join(asked, " "); got != c.asked || n.String() != c.want {
				t.Errorf("asked [%s] and decided %s; want [%s] and %s", got, n, c.asked, c.want)
			}
		})
	}
}

// TestHookNamesCoverEveryHook keeps the table's names in step with the hooks.
func TestHookNamesCoverEveryHook(t *testing.T) {
	for h := hookCompact; h <= hookRefreshLive; h <<= 1 {
		if hookNames[h] == "" {
			t.Errorf("hook %s has no name in the table", fmt.Sprint(uint16(h)))
		}
	}
}
