package session

import (
	"context"
	"iter"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// blockingProvider streams nothing until its context ends; started learns of each call.
type blockingProvider struct{ started chan struct{} }

func (p *blockingProvider) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		if len(req.Tools) == 0 { // title
			yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
			return
		}
		p.started <- struct{}{}
		<-ctx.Done()
	}
}

// BenchmarkCancelAnswer measures the contract's cancel bound (a cancelled prompt answers within
// 100 ms): from Manager.Cancel to the prompt's answer, with a provider that never answers on its
// own. The cancel tests assert that the answer comes; this measures how soon.
func BenchmarkCancelAnswer(b *testing.B) {
	dir := b.TempDir()
	prov := &blockingProvider{started: make(chan struct{}, 1)}
	m := NewManager(Deps{
		Client:     nopClient{},
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return &fakeWS{files: map[string]string{}} },
		Providers:  fakeSource{p: prov},
		Tools:      tools.NewRegistry(readTool{}),
		Settings:   func() config.Settings { return config.Settings{} },
		StateDir:   b.TempDir(),
	})
	defer m.Shutdown(context.Background())
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	if err != nil {
		b.Fatal(err)
	}
	p := protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("wait")}}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		done := make(chan protocol.PromptResult, 1)
		go func() {
			res, _ := m.Prompt(context.Background(), p)
			done <- res
		}()
		<-prov.started
		b.StartTimer()
		m.Cancel(ns.SessionID)
		if res := <-done; res.StopReason != protocol.StopCancelled {
			b.Fatalf("stop %q", res.StopReason)
		}
	}
}
