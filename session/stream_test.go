package session

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/workspace"
)

// chunkClient is the fake client with the chunk path the editor bridge offers (chunkSender).
type chunkClient struct {
	*fakeClient
	chunks atomic.Int64
}

func (c *chunkClient) UpdateChunk(sessionID, kind, messageID, text string) {
	c.chunks.Add(1)
	c.fakeClient.Update(sessionID, protocol.SessionUpdate{SessionUpdate: kind, MessageID: messageID,
		Content: &protocol.ContentBlock{Type: "text", Text: text}})
}

// A client that offers the chunk path gets every streamed text and thought chunk through it, and
// the same updates as through Update.
func TestStreamSendsChunksThroughTheChunkPath(t *testing.T) {
	evs := []providers.Event{
		{Type: providers.EventThinkingDelta, Text: "let me "},
		{Type: providers.EventThinkingDelta, Text: "think"},
	}
	evs = append(evs, textReply("hello there, world")...)
	h := newHarness(t, reply{events: evs})
	cc := &chunkClient{fakeClient: h.client}
	// The harness shuts down whichever manager h.m holds at the end.
	h.m = NewManager(Deps{
		Client:     cc,
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return h.ws },
		Providers:  fakeSource{p: h.prov},
		Tools:      h.m.d.Tools,
		Settings:   func() config.Settings { return h.set },
		StateDir:   h.state,
	})
	h.newSession()
	if res := h.prompt("hi"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	text := func(kind string) string {
		var b strings.Builder
		for _, u := range kinds(h.client.snapshot(), kind) {
			b.WriteString(u.Content.Text)
		}
		return b.String()
	}
	if got := text(protocol.UpdateAgentThoughtChunk); got != "let me think" {
		t.Errorf("thought %q", got)
	}
	if got := text(protocol.UpdateAgentMessageChunk); got != "hello there, world" {
		t.Errorf("text %q", got)
	}
	// 2 thought deltas and the text in 4 deltas of 5 bytes (textReply), each a chunk.
	if n := cc.chunks.Load(); n != 6 {
		t.Errorf("%d chunks through UpdateChunk, want 6", n)
	}
}
