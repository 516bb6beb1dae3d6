package acceptance_test

// Issue 33 item 4: a client lists the remembered answers and revokes one, through the binary.

import (
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/protocol"
)

func TestGrantsListedAndRevokedThroughTheBinary(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "a", "name": "create_file", "args": map[string]any{"path": "a.txt", "content": "a"}}}},
		map[string]any{"text": "first turn done"},
		map[string]any{"toolCalls": []any{map[string]any{"id": "b", "name": "create_file", "args": map[string]any{"path": "a.txt", "content": "b", "overwrite": true}}}},
		map[string]any{"text": "second turn done"},
	)))
	e.ed.AnswerPermissions("allow_session")
	sid := e.newSession()
	e.prompt(sid, "one")
	var list protocol.GrantsListResult
	if err := e.ed.Call(ctxT(t), protocol.MethodGrantsList, protocol.SessionIDParams{SessionID: sid}, &list); err != nil {
		t.Fatalf("grants/list: %v", err)
	}
	if len(list.Grants) != 1 || list.Grants[0].Label != "Allow create_file for this session" || list.Grants[0].Scope != "session" {
		t.Fatalf("grants = %+v", list.Grants)
	}
	var res protocol.GrantRevokeResult
	if err := e.ed.Call(ctxT(t), protocol.MethodGrantsRevoke, protocol.GrantRevokeParams{SessionID: sid, GrantID: list.Grants[0].GrantID}, &res); err != nil || !res.Revoked {
		t.Fatalf("grants/revoke = %+v, %v", res, err)
	}
	e.ed.AnswerPermissions("reject_once")
	e.prompt(sid, "two")
	if n := len(e.ed.PermissionRequests()); n != 2 {
		t.Errorf("%d permission requests, want 2: the revoked grant still answered", n)
	}
	if got := e.ed.Text(e.root + "/a.txt"); got != "a" {
		t.Errorf("a.txt = %q, want a (the second write was rejected)", got)
	}
	if err := e.ed.Call(ctxT(t), protocol.MethodGrantsRevoke, map[string]any{"sessionId": sid}, &res); err == nil {
		t.Error("a revoke without grantId was accepted")
	}
}
