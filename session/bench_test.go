package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

type nopClient struct{}

func (nopClient) Update(string, protocol.SessionUpdate) {}
func (nopClient) RequestPermission(context.Context, protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
	return protocol.RequestPermissionResult{}, nil
}
func (nopClient) CanAskPermission() bool { return false }

// loopProvider answers every tool-using request with reply(n), n counting its calls.
type loopProvider struct {
	n     int
	reply func(n int) []providers.Event
}

func (p *loopProvider) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		if len(req.Tools) == 0 { // title
			yield(providers.Event{Type: providers.EventTextDelta, Text: "t"})
			yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
			return
		}
		p.n++
		for _, ev := range p.reply(p.n) {
			if !yield(ev) {
				return
			}
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTwoCallTurn is a turn of two model calls (one read, then text) with a provider that
// answers instantly: the daemon's own cost per turn.
func BenchmarkTwoCallTurn(b *testing.B) {
	dir := b.TempDir()
	ws := &fakeWS{files: map[string]string{dir + "/a.txt": strings.Repeat("some line of code\n", 100)}}
	prov := &loopProvider{reply: func(n int) []providers.Event {
		if n%2 == 1 {
			return callsReply(tc{fmt.Sprintf("c%d", n), "read_file", `{"path":"a.txt"}`})
		}
		return textReply("The file has one hundred lines.")
	}}
	m := NewManager(Deps{
		Client:     nopClient{},
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return ws },
		Providers:  fakeSource{p: prov},
		Tools:      tools.NewRegistry(readTool{}, editTool{}),
		Settings:   func() config.Settings { return config.Settings{} },
		StateDir:   b.TempDir(),
	})
	defer m.Shutdown(context.Background())
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	if err != nil {
		b.Fatal(err)
	}
	p := protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("read a.txt")}}
	// Each turn starts from a fresh history so the cost does not grow with b.N.
	s, _ := m.get(ns.SessionID)
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		s.mu.Lock()
		s.history = nil
		s.mu.Unlock()
		if res, _ := m.Prompt(context.Background(), p); res.StopReason != protocol.StopEndTurn {
			b.Fatalf("stop %q", res.StopReason)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
}

// BenchmarkParallelReads compares eight reads of one response against one read, each with 50 ms
// of editor latency.
func BenchmarkParallelReads(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("reads=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			ws := &fakeWS{files: map[string]string{dir + "/a.txt": "x\n"}, readDelay: 50 * time.Millisecond}
			var calls []tc
			for i := range n {
				calls = append(calls, tc{fmt.Sprintf("r%d", i), "read_file", `{"path":"a.txt"}`})
			}
			prov := &loopProvider{reply: func(k int) []providers.Event {
				if k%2 == 1 {
					return callsReply(calls...)
				}
				return textReply("ok")
			}}
			m := NewManager(Deps{
				Client:     nopClient{},
				Workspaces: func(string, *workspace.Roots) workspace.Workspace { return ws },
				Providers:  fakeSource{p: prov},
				Tools:      tools.NewRegistry(readTool{}),
				Settings:   func() config.Settings { return config.Settings{} },
			})
			defer m.Shutdown(context.Background())
			ns, _ := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
			p := protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("read")}}
			for b.Loop() {
				m.Prompt(context.Background(), p)
			}
		})
	}
}

// compactionTask replays a scripted 24-step task (each step reads a 6 KB file, then the model
// says a sentence) and returns the tokens sent in all its requests (bytes / 4) and the number of
// steps whose request's messages, serialized, are not a byte prefix of the next request's: the
// steps at which a provider's prompt cache prefix over the conversation breaks.
func compactionTask(t testing.TB, elide bool) (sent, prefixChanges int) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 24 {
		var sb strings.Builder
		for l := range 150 {
			fmt.Fprintf(&sb, "func f%d_%d() int { return %d } // line of file %d\n", i, l, l, i)
		}
		files[fmt.Sprintf("%s/f%d.go", dir, i)] = sb.String()
	}
	ws := &fakeWS{files: files}
	var prev []byte
	prov := &loopProvider{reply: func(n int) []providers.Event {
		if n <= 24 {
			return append([]providers.Event{{Type: providers.EventTextDelta, Text: fmt.Sprintf("Step %d: reading the next file.", n)}},
				callsReply(tc{fmt.Sprintf("c%d", n), "read_file", fmt.Sprintf(`{"path":"f%d.go"}`, n-1)})...)
		}
		return textReply("All 24 files read.")
	}}
	counting := providerFunc(func(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
		if len(req.Tools) > 0 {
			n := len(req.System) + len(req.Context)
			for _, m := range req.Messages {
				for _, p := range m.Parts {
					n += len(p.Text) + len(p.Args)
				}
			}
			sent += n / 4
			var ser []byte
			for _, m := range req.Messages {
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				ser = append(ser, b...)
			}
			if prev != nil && !bytes.HasPrefix(ser, prev) {
				prefixChanges++
			}
			prev = ser
		}
		return prov.Stream(ctx, req)
	})
	m := NewManager(Deps{
		Client:     nopClient{},
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return ws },
		Providers:  fakeSource{p: counting},
		Tools:      tools.NewRegistry(readTool{}),
		Settings:   func() config.Settings { return config.Settings{MaxIterations: 30} },
	})
	defer m.Shutdown(context.Background())
	ns, _ := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	s, _ := m.get(ns.SessionID)
	s.noElide = !elide
	res, _ := m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("read every file")}})
	if res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	return sent, prefixChanges
}

type providerFunc func(ctx context.Context, req *providers.Request) iter.Seq[providers.Event]

func (f providerFunc) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return f(ctx, req)
}

func TestCompactionResendsAtMost40Percent(t *testing.T) {
	with, _ := compactionTask(t, true)
	without, _ := compactionTask(t, false)
	ratio := float64(with) / float64(without)
	t.Logf("tokens sent over 24 steps: %d with elision, %d without (%.0f%%)", with, without, ratio*100)
	if ratio > 0.40 {
		t.Fatalf("elision re-sends %.0f%% of the tokens, want ≤ 40%%", ratio*100)
	}
}

func BenchmarkCompaction24Steps(b *testing.B) {
	for b.Loop() {
		with, changes := compactionTask(b, true)
		without, _ := compactionTask(b, false)
		b.ReportMetric(float64(with)/float64(without)*100, "%resent")
		b.ReportMetric(float64(changes), "prefix-changes")
		b.ReportMetric(float64(with), "tokens")
		b.ReportMetric(float64(without), "tokens-uncompacted")
	}
}

// TestElisionKeepsCachePrefixStable counts the steps of the scripted task at which a request's
// messages stop being a byte prefix of the next request's (each one breaks a provider's prompt
// cache over the conversation). The budget is fixed, not derived from elideBlock: the prefix may
// break at most once every three steps, ⌈24/3⌉+1 times (moving the boundary one result per
// step breaks it at 20 of the 24 steps).
func TestElisionKeepsCachePrefixStable(t *testing.T) {
	_, changes := compactionTask(t, true)
	_, baseline := compactionTask(t, false)
	const limit = (24+2)/3 + 1
	t.Logf("prefix changes over 24 steps: %d with elision (limit %d), %d without", changes, limit, baseline)
	if baseline != 0 {
		t.Fatalf("the unelided history changed its prefix %d times, want 0", baseline)
	}
	if changes > limit {
		t.Fatalf("the request prefix changed at %d of 24 steps, want ≤ %d", changes, limit)
	}
}
