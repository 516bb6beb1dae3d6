package session

import (
	"context"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
)

// agent/session/new's available_commands_update names a session the client learns only from the
// answer, so under a scheduler (the rpc server's) it waits for the answer.
func TestNewAnnouncesCommandsAfterTheAnswer(t *testing.T) {
	h := newHarness(t)
	var scheduled []func()
	ctx := WithAfterAnswer(context.Background(), func(fn func()) { scheduled = append(scheduled, fn) })
	res, err := h.m.New(ctx, protocol.SessionNewParams{Cwd: h.dir})
	if err != nil || res.SessionID == "" {
		t.Fatalf("new: %+v, %v", res, err)
	}
	if us := kinds(h.client.snapshot(), protocol.UpdateAvailableCommandsUpdate); len(us) != 0 || len(scheduled) != 1 {
		t.Fatalf("before the answer: %d scheduled, updates %s", len(scheduled), dumpUpdates(us))
	}
	scheduled[0]()
	us := kinds(h.client.snapshot(), protocol.UpdateAvailableCommandsUpdate)
	if len(us) != 1 || len(us[0].AvailableCommands) == 0 || us[0].AvailableCommands[0].Name != "compact" {
		t.Fatalf("after the answer: %s", dumpUpdates(us))
	}

	// Without a scheduler (agentd exec) the commands go out before New returns, and load, whose
	// client already knows the id, announces them before it answers either way.
	h.newSession()
	if n := len(kinds(h.client.snapshot(), protocol.UpdateAvailableCommandsUpdate)); n != 2 {
		t.Fatalf("%d announcements after a second New", n)
	}
	if err := h.m.Close(context.Background(), res.SessionID); err != nil {
		t.Fatal(err)
	}
	scheduled = nil
	if _, err := h.m.Load(ctx, protocol.SessionLoadParams{SessionID: res.SessionID, Cwd: h.dir}); err != nil {
		t.Fatal(err)
	}
	if n := len(kinds(h.client.snapshot(), protocol.UpdateAvailableCommandsUpdate)); n != 3 || len(scheduled) != 0 {
		t.Fatalf("load: %d announcements, %d scheduled", n, len(scheduled))
	}
}
