package rpc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/session"
)

// Work the engine schedules with session.AfterAnswer goes out after the call's answer: a client
// learns a new session's id from the agent/session/new answer and drops updates for ids it does
// not know yet.
func TestAfterAnswerFollowsTheAnswer(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	e.fake.newFn = func(ctx context.Context, p protocol.SessionNewParams) (protocol.SessionNewResult, error) {
		session.AfterAnswer(ctx, func() {
			e.fake.deps.Client.Update("s1", protocol.SessionUpdate{SessionUpdate: protocol.UpdateAvailableCommandsUpdate,
				AvailableCommands: []protocol.AvailableCommand{{Name: "compact", Description: "d"}}})
		})
		return protocol.SessionNewResult{SessionID: "s1", ConfigOptions: []protocol.ConfigOption{}}, nil
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	res := h.call(protocol.MethodSessionNew, map[string]any{"cwd": "/a"})
	var got protocol.SessionNewResult
	if res.Error != nil || json.Unmarshal(res.Result, &got) != nil || got.SessionID != "s1" {
		t.Fatalf("new answered %s %+v", res.Result, res.Error)
	}
	n := h.note(protocol.MethodSessionUpdate)
	var p protocol.SessionNotification
	if json.Unmarshal(n.Params, &p) != nil || p.SessionID != "s1" || p.Update.SessionUpdate != protocol.UpdateAvailableCommandsUpdate {
		t.Fatalf("update = %s", n.Params)
	}
	h.mu.Lock()
	log := h.log.String()
	h.mu.Unlock()
	answer, update := strings.Index(log, `"result":{"sessionId":"s1"`), strings.Index(log, `"available_commands_update"`)
	if answer < 0 || update < answer {
		t.Fatalf("the update did not follow the answer:\n%s", log)
	}
	// Other answers carry nothing along.
	wantResult(t, h.call(protocol.MethodSessionList, map[string]any{}), nil)
	select {
	case m := <-h.notes:
		t.Fatalf("unexpected notification %s %s", m.Method, m.Params)
	default:
	}
}
