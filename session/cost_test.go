package session

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// usageReply is a text answer whose model call reports u.
func usageReply(text string, u providers.Usage) reply {
	return reply{events: []providers.Event{
		{Type: providers.EventTextDelta, Text: text},
		{Type: providers.EventUsage, Usage: u},
		{Type: providers.EventCompleted, StopReason: providers.StopEndTurn},
	}}
}

func costManager(t *testing.T, state string, set config.Settings, client *fakeClient, replies ...reply) *Manager {
	t.Helper()
	m := NewManager(Deps{
		Client:     client,
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return &fakeWS{files: map[string]string{}} },
		Providers:  fakeSource{p: newFakeProvider(replies...)},
		Tools:      tools.NewRegistry(readTool{}),
		Settings:   func() config.Settings { return set },
		StateDir:   state,
		NoTitles:   true,
	})
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	return m
}

func costs(c *fakeClient) []*protocol.Cost {
	var out []*protocol.Cost
	for _, u := range kinds(c.snapshot(), protocol.UpdateUsageUpdate) {
		out = append(out, u.Cost)
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestCostIsCumulativeAndSurvivesLoad: each model call's tokens are priced by kind (cache reads
// and writes apart from the uncached input), the usage_update carries the session's sum, and a
// daemon that loads or resumes the transcript shows that sum and goes on from it.
func TestCostIsCumulativeAndSurvivesLoad(t *testing.T) {
	cr, cw := 0.5, 4.0
	set := config.Defaults()
	set.Models = map[string]config.ModelSettings{"fake-model": {Price: &config.Price{Input: 2, Output: 10, CacheRead: &cr, CacheWrite: &cw, Currency: "EUR"}}}
	u := providers.Usage{Input: 1000, Output: 200, CacheRead: 10000, CacheWrite: 500}
	const call = (1000*2 + 200*10 + 10000*0.5 + 500*4.0) / 1e6 // 0.011: the cache priced as input would be 0.023
	state, dir := t.TempDir(), t.TempDir()
	client := newFakeClient()
	m := costManager(t, state, set, client, usageReply("one", u), usageReply("two", u))
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "second"} {
		if res, _ := m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock(text)}}); res.StopReason != protocol.StopEndTurn {
			t.Fatalf("stop %q", res.StopReason)
		}
	}
	got := costs(client)
	if len(got) != 2 || got[0] == nil || got[1] == nil || !near(got[0].Amount, call) || !near(got[1].Amount, 2*call) || got[1].Currency != "EUR" {
		t.Fatalf("costs = %s, want %v then %v EUR", dumpUpdates(kinds(client.snapshot(), protocol.UpdateUsageUpdate)), call, 2*call)
	}
	m.Shutdown(context.Background())

	calls := 2
	for _, resume := range []bool{false, true} {
		client := newFakeClient()
		m := costManager(t, state, set, client, usageReply("three", u))
		p := protocol.SessionLoadParams{SessionID: ns.SessionID, Cwd: dir}
		open := m.Load
		if resume {
			open = m.Resume
		}
		if _, err := open(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if got := costs(client); len(got) != 1 || got[0] == nil || !near(got[0].Amount, float64(calls)*call) || got[0].Currency != "EUR" {
			t.Fatalf("resume %v: costs shown on open = %s, want %v EUR", resume, dumpUpdates(kinds(client.snapshot(), protocol.UpdateUsageUpdate)), float64(calls)*call)
		}
		if res, _ := m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("third")}}); res.StopReason != protocol.StopEndTurn {
			t.Fatalf("stop %q", res.StopReason)
		}
		calls++
		want := float64(calls) * call
		if got := costs(client); len(got) != 2 || got[1] == nil || !near(got[1].Amount, want) {
			t.Fatalf("resume %v: cost after the next call = %+v, want %v", resume, got[len(got)-1], want)
		}
		m.Shutdown(context.Background())
	}
}

// TestNoPriceNoCost: a model no price table knows gets usage updates without a cost field,
// never a cost of 0.
func TestNoPriceNoCost(t *testing.T) {
	client := newFakeClient()
	m := costManager(t, t.TempDir(), config.Defaults(), client, usageReply("one", providers.Usage{Input: 100, Output: 10, CacheRead: 50}))
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("hi")}})
	uu := kinds(client.snapshot(), protocol.UpdateUsageUpdate)
	if len(uu) != 1 {
		t.Fatalf("usage updates = %s", dumpUpdates(uu))
	}
	b, _ := json.Marshal(uu[0])
	if uu[0].Cost != nil || strings.Contains(string(b), "cost") {
		t.Fatalf("an unpriced model's usage_update = %s, want no cost", b)
	}
}

// TestSideRequestsCount: the title request after the first exchange and the summary of /compact
// are model calls the session pays for: each adds its price to the session's cost (a
// usage_update with the new sum, the meter unchanged), the summary's tokens count in the
// /compact turn's usage, and a load shows the sum with them.
func TestSideRequestsCount(t *testing.T) {
	set := config.Defaults()
	set.Models = map[string]config.ModelSettings{"fake-model": {Price: &config.Price{Input: 2, Output: 10, Currency: "USD"}}}
	turn := providers.Usage{Input: 1000, Output: 100}
	side := providers.Usage{Input: 300, Output: 20}
	const turnCost, sideCost = (1000*2 + 100*10) / 1e6, (300*2 + 20*10) / 1e6
	state, dir := t.TempDir(), t.TempDir()
	client := newFakeClient()
	prov := newFakeProvider(usageReply("one", turn))
	prov.sideUsage = side
	m := NewManager(Deps{
		Client:     client,
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return &fakeWS{files: map[string]string{}} },
		Providers:  fakeSource{p: prov},
		Tools:      tools.NewRegistry(readTool{}),
		Settings:   func() config.Settings { return set },
		StateDir:   state,
	})
	defer m.Shutdown(context.Background())
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("first")}})
	waitFor(t, func() bool { return len(kinds(client.snapshot(), protocol.UpdateSessionInfoUpdate)) > 0 })
	waitFor(t, func() bool { return len(costs(client)) == 2 })
	got := costs(client)
	if got[0] == nil || !near(got[0].Amount, turnCost) || got[1] == nil || !near(got[1].Amount, turnCost+sideCost) {
		t.Fatalf("costs after the first turn and its title = %s, want %v then %v", dumpUpdates(kinds(client.snapshot(), protocol.UpdateUsageUpdate)), turnCost, turnCost+sideCost)
	}
	uu := kinds(client.snapshot(), protocol.UpdateUsageUpdate)
	if *uu[1].Used != *uu[0].Used || *uu[1].Size != *uu[0].Size {
		t.Errorf("the title's usage_update moved the context meter: %s", dumpUpdates(uu))
	}
	res, _ := m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("/compact")}})
	if res.Usage == nil || res.Usage.InputTokens != side.Input || res.Usage.OutputTokens != side.Output {
		t.Errorf("/compact's usage = %+v, want the summary's %d in, %d out", res.Usage, side.Input, side.Output)
	}
	got = costs(client)
	if len(got) != 3 || got[2] == nil || !near(got[2].Amount, turnCost+2*sideCost) {
		t.Fatalf("costs after /compact = %s, want the sum %v", dumpUpdates(kinds(client.snapshot(), protocol.UpdateUsageUpdate)), turnCost+2*sideCost)
	}
	m.Shutdown(context.Background())

	client2 := newFakeClient()
	m2 := costManager(t, state, set, client2)
	if _, err := m2.Load(context.Background(), protocol.SessionLoadParams{SessionID: ns.SessionID, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	if got := costs(client2); len(got) != 1 || got[0] == nil || !near(got[0].Amount, turnCost+2*sideCost) {
		t.Errorf("cost shown on load = %s, want %v", dumpUpdates(kinds(client2.snapshot(), protocol.UpdateUsageUpdate)), turnCost+2*sideCost)
	}
}

// TestSideRequestWithoutUsageAddsNothing: a side request whose provider reports no usage sends
// no usage_update and leaves the cost as it was.
func TestSideRequestWithoutUsageAddsNothing(t *testing.T) {
	set := config.Defaults()
	set.Models = map[string]config.ModelSettings{"fake-model": {Price: &config.Price{Input: 2, Output: 10, Currency: "USD"}}}
	client := newFakeClient()
	m := costManager(t, t.TempDir(), set, client, usageReply("one", providers.Usage{Input: 10, Output: 1}))
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("first")}})
	m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("/compact")}})
	if got := costs(client); len(got) != 1 {
		t.Errorf("usage updates = %s, want only the turn's", dumpUpdates(kinds(client.snapshot(), protocol.UpdateUsageUpdate)))
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// answer_review is a boolean config option (category model_config), offered only to a client
// that takes booleans: with one it reflects settings answerReview, the user's value holds for the
// session and survives a load; without one it is neither offered nor settable, and a select is
// never set as a boolean.
func TestAnswerReviewOption(t *testing.T) {
	for _, booleans := range []bool{false, true} {
		set := config.Defaults()
		state := t.TempDir()
		mk := func() *Manager {
			m := NewManager(Deps{
				Client:     newFakeClient(),
				Workspaces: func(string, *workspace.Roots) workspace.Workspace { return &fakeWS{files: map[string]string{}} },
				Providers:  fakeSource{p: newFakeProvider(usageReply("one", providers.Usage{}))},
				Tools:      tools.NewRegistry(readTool{}),
				Settings:   func() config.Settings { return set },
				StateDir:   state, NoTitles: true, BooleanConfigOptions: booleans,
			})
			t.Cleanup(func() { m.Shutdown(context.Background()) })
			return m
		}
		m := mk()
		dir := t.TempDir()
		ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
		if err != nil {
			t.Fatal(err)
		}
		review := func(opts []protocol.ConfigOption) *protocol.ConfigOption {
			for i := range opts {
				if opts[i].ID == "answer_review" {
					return &opts[i]
				}
			}
			return nil
		}
		o := review(ns.ConfigOptions)
		setReview := protocol.SetConfigOptionParams{SessionID: ns.SessionID, ConfigID: "answer_review", Type: protocol.ConfigBoolean, Value: "true"}
		if !booleans {
			if o != nil {
				t.Errorf("answer_review offered to a client without booleans: %+v", o)
			}
			if _, err := m.SetConfigOption(context.Background(), setReview); err == nil {
				t.Error("answer_review set for a client without booleans")
			}
			continue
		}
		if o == nil || o.Type != protocol.ConfigBoolean || o.Category != "model_config" || o.CurrentValue != "false" || o.Options != nil {
			t.Fatalf("answer_review = %+v, want a model_config boolean, false as settings answerReview is", o)
		}
		for _, bad := range []protocol.SetConfigOptionParams{
			{SessionID: ns.SessionID, ConfigID: "answer_review", Value: "true"},                                // no type: a value id
			{SessionID: ns.SessionID, ConfigID: "answer_review", Type: protocol.ConfigBoolean, Value: "maybe"}, // not a boolean
			{SessionID: ns.SessionID, ConfigID: "mode", Type: protocol.ConfigBoolean, Value: "true"},           // a select
		} {
			if _, err := m.SetConfigOption(context.Background(), bad); err == nil {
				t.Errorf("set_config_option %+v accepted", bad)
			}
		}
		res, err := m.SetConfigOption(context.Background(), setReview)
		if err != nil || review(res.ConfigOptions) == nil || review(res.ConfigOptions).CurrentValue != "true" || len(res.ConfigOptions) != len(ns.ConfigOptions) {
			t.Fatalf("set answer_review = %+v, %v", res, err)
		}
		m.Shutdown(context.Background())
		loaded, err := mk().Load(context.Background(), protocol.SessionLoadParams{SessionID: ns.SessionID, Cwd: dir})
		if err != nil || review(loaded.ConfigOptions) == nil || review(loaded.ConfigOptions).CurrentValue != "true" {
			t.Errorf("answer_review after load = %+v, %v", loaded.ConfigOptions, err)
		}
	}
}

// The session's answer_review decides whether its turns review an answer that holds code: set
// true, a turn makes the review request (whose tokens count in the turn's usage) though settings
// answerReview is off; set false, it makes none.
func TestAnswerReviewOptionRunsTheReview(t *testing.T) {
	for _, on := range []bool{true, false} {
		set := config.Defaults()
		code := "Here:\n```go\nx := 1\n```\n"
		review := providers.Usage{Input: 70, Output: 7}
		prov := newFakeProvider(usageReply(code, providers.Usage{Input: 10, Output: 1}), usageReply("APPROVED", review))
		m := NewManager(Deps{
			Client:     newFakeClient(),
			Workspaces: func(string, *workspace.Roots) workspace.Workspace { return &fakeWS{files: map[string]string{}} },
			Providers:  fakeSource{p: prov},
			Tools:      tools.NewRegistry(readTool{}),
			Settings:   func() config.Settings { return set },
			StateDir:   t.TempDir(), NoTitles: true, BooleanConfigOptions: true,
		})
		t.Cleanup(func() { m.Shutdown(context.Background()) })
		ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: ns.SessionID, ConfigID: "answer_review",
			Type: protocol.ConfigBoolean, Value: strconv.FormatBool(on)}); err != nil {
			t.Fatal(err)
		}
		res, _ := m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("write x")}})
		prov.mu.Lock()
		n := len(prov.reqs)
		prov.mu.Unlock()
		want := 1
		if on {
			want = 2
		}
		if n != want {
			t.Errorf("answer_review %v: %d model requests, want %d", on, n, want)
		}
		if on && (res.Usage == nil || res.Usage.InputTokens != 10+review.Input) {
			t.Errorf("answer_review on: the turn's usage %+v leaves out the review's %d tokens in", res.Usage, review.Input)
		}
	}
}
