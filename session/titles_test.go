package session

import (
	"context"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// asideCounter counts the model requests made without tools (titles, summaries).
type asideCounter struct {
	providers.Provider
	n *atomic.Int32
}

func (a asideCounter) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	if len(req.Tools) == 0 {
		a.n.Add(1)
	}
	return a.Provider.Stream(ctx, req)
}

// TestNoTitlesSkipsTheTitleRequest: agentd exec runs one turn and shows no session list, so
// naming the session would be a model request (paid, on a real provider) for nothing.
func TestNoTitlesSkipsTheTitleRequest(t *testing.T) {
	for _, noTitles := range []bool{false, true} {
		h := newHarness(t, reply{events: textReply("hello")})
		_ = h.m.Shutdown(context.Background()) // replaced by one that counts
		var asides atomic.Int32
		m := NewManager(Deps{
			Client:     h.client,
			Workspaces: func(string, *workspace.Roots) workspace.Workspace { return h.ws },
			Providers:  fakeSource{p: asideCounter{h.prov, &asides}},
			Tools:      tools.NewRegistry(readTool{}),
			Settings:   func() config.Settings { return h.set },
			StateDir:   h.state,
			NoTitles:   noTitles,
		})
		h.m = m
		h.newSession()
		if res := h.prompt("hi"); res.StopReason != protocol.StopEndTurn {
			t.Fatalf("stopReason %q", res.StopReason)
		}
		if !noTitles {
			h.client.waitFor(t, "title", func(us []protocol.SessionUpdate) bool { return len(kinds(us, protocol.UpdateSessionInfoUpdate)) == 1 })
		}
		if err := m.Shutdown(context.Background()); err != nil { // waits for background requests
			t.Fatal(err)
		}
		want := int32(1)
		if noTitles {
			want = 0
		}
		if got := asides.Load(); got != want {
			t.Errorf("NoTitles %v: %d title requests, want %d", noTitles, got, want)
		}
	}
}
