package session

import (
	"context"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
)

// Issue 33 item 4: the remembered answers are listed with what they cover and their scope, and
// revoking one makes the next such call ask again, on disk too for a project's.
func TestGrantsAreListedAndRevoked(t *testing.T) {
	h := newHarness(t,
		editReply("e1", "alpha", "A1"), reply{events: textReply("done")},
		editReply("e2", "A1", "A2"), reply{events: textReply("done")},
		editReply("e3", "A1", "A3"), reply{events: textReply("done")},
	)
	ctx := context.Background()
	h.client.answer = answerWith(protocol.OptionAllowSession)
	h.newSession()
	h.prompt("edit")
	h.client.answer = answerWith(protocol.OptionRejectAlways)
	other := h.newSession()
	h.prompt("edit, rejected for the project") // the reject covers a.txt for every write tool
	if got := h.ws.file(h.path("a.txt")); got != "A1\n" {
		t.Fatalf("file = %q", got)
	}

	list, err := h.m.Grants(ctx, protocol.SessionIDParams{SessionID: other})
	if err != nil {
		t.Fatal(err)
	}
	// The second session sees only the project's reject: the first session's allow is its own.
	if len(list.Grants) != 1 {
		t.Fatalf("grants = %+v", list.Grants)
	}
	g := list.Grants[0]
	if g.Scope != "project" || g.Allow || g.Tool != "edit_file" || g.GrantID == "" ||
		g.Label != "Always reject changes to "+g.Pattern+" in this project" || !strings.HasSuffix(g.Pattern, "a.txt") {
		t.Fatalf("project grant = %+v", g)
	}

	// Revoking it: the next edit asks again (and is allowed once), and a daemon started later on
	// the same state dir does not see it either.
	res, err := h.m.RevokeGrant(ctx, protocol.GrantRevokeParams{SessionID: other, GrantID: g.GrantID})
	if err != nil || !res.Revoked {
		t.Fatalf("revoke = %+v, %v", res, err)
	}
	if res, _ := h.m.RevokeGrant(ctx, protocol.GrantRevokeParams{SessionID: other, GrantID: g.GrantID}); res.Revoked {
		t.Fatal("a grant revoked twice")
	}
	asked := len(h.client.permissions())
	h.client.answer = answerWith(protocol.OptionAllowOnce)
	h.prompt("edit again")
	if len(h.client.permissions()) != asked+1 || h.ws.file(h.path("a.txt")) != "A3\n" {
		t.Fatalf("after revoke: asked %d→%d, file %q", asked, len(h.client.permissions()), h.ws.file(h.path("a.txt")))
	}
	fresh := h.manager()
	t.Cleanup(func() { _ = fresh.Shutdown(ctx) })
	if got := fresh.projects.grants(h.dir); len(got) != 0 {
		t.Fatalf("the revoked grant is still on disk: %+v", got)
	}
}

func TestSessionGrantIsRevokedForThatSessionOnly(t *testing.T) {
	h := newHarness(t,
		editReply("e1", "alpha", "A1"), reply{events: textReply("done")},
		editReply("e2", "A1", "A2"), reply{events: textReply("done")},
	)
	ctx := context.Background()
	h.client.answer = answerWith(protocol.OptionAllowSession)
	sid := h.newSession()
	h.prompt("edit")
	list, _ := h.m.Grants(ctx, protocol.SessionIDParams{SessionID: sid})
	if len(list.Grants) != 1 || list.Grants[0].Scope != "session" || !list.Grants[0].Allow ||
		list.Grants[0].Label != "Allow edit_file for this session" {
		t.Fatalf("grants = %+v", list.Grants)
	}
	if res, err := h.m.RevokeGrant(ctx, protocol.GrantRevokeParams{SessionID: sid, GrantID: list.Grants[0].GrantID}); err != nil || !res.Revoked {
		t.Fatalf("revoke = %+v, %v", res, err)
	}
	h.client.answer = answerWith(protocol.OptionRejectOnce)
	h.prompt("edit again")
	if n := len(h.client.permissions()); n != 2 {
		t.Fatalf("asked %d times, want 2 (the revoked allow no longer answers)", n)
	}
	if _, err := h.m.RevokeGrant(ctx, protocol.GrantRevokeParams{SessionID: sid}); err == nil || !strings.Contains(err.Error(), "grantId") {
		t.Fatalf("a revoke without grantId: %v", err)
	}
	if _, err := h.m.Grants(ctx, protocol.SessionIDParams{SessionID: "nope"}); err == nil {
		t.Fatal("grants of an unknown session")
	}
}
