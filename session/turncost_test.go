package session

import (
	"bytes"
	"context"
	"os"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// TestRecordsThatGoTogetherShareAWrite: a two-call turn (a read, then text) writes its records
// in one write call per step, not one each: the user's message with what the client was shown of
// it, and each model step's message with its shown text and the end of its checkpoints. The
// call's result and its message to the model stay apart (the call's record is written as it
// finishes, while other calls of the response may still run). Every record is in the file when
// the turn answers, in the order it was made.
func TestRecordsThatGoTogetherShareAWrite(t *testing.T) {
	dir := t.TempDir()
	ws := &fakeWS{files: map[string]string{dir + "/a.txt": strings.Repeat("some line of code\n", 100)}}
	prov := &loopProvider{reply: func(n int) []providers.Event {
		if n == 1 {
			return callsReply(tc{"c1", "read_file", `{"path":"a.txt"}`})
		}
		return textReply("The file has one hundred lines.")
	}}
	m := NewManager(Deps{
		Client:     nopClient{},
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return ws },
		Providers:  fakeSource{p: prov},
		Tools:      tools.NewRegistry(readTool{}, editTool{}),
		Settings:   func() config.Settings { return config.Settings{} },
		StateDir:   t.TempDir(),
		NoTitles:   true,
	})
	defer m.Shutdown(context.Background())
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := m.get(ns.SessionID)
	lines := func() []string {
		b, err := os.ReadFile(s.file.f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(bytes.TrimSuffix(b, []byte("\n"))), "\n")
	}
	before, writes := len(lines()), s.file.writes
	p := protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("read a.txt")}}
	if res, _ := m.Prompt(context.Background(), p); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	var kinds []string
	for _, l := range lines()[before:] {
		i := strings.Index(l, `"t":"`)
		kinds = append(kinds, l[i+5:i+5+strings.IndexByte(l[i+5:], '"')])
	}
	// user message + its shown text | the announced call's checkpoint | the call step's message
	// + its usage + checkpoint end | the call's result | the results' message | the text step's
	// message + its shown text + its usage.
	want := "message update | streaming | message usage streaming | update | message | message update usage"
	if got := strings.Join(kinds, " "); got != strings.ReplaceAll(want, " |", "") {
		t.Fatalf("records %q, want %q", got, want)
	}
	if n, groups := s.file.writes-writes, strings.Count(want, "|")+1; n != groups {
		t.Errorf("%d records took %d write calls, want %d", len(kinds), n, groups)
	}
}

// TestLiveContextStartsAGoroutinePerEditorQuestion: the live context asks the editor its three
// questions at once, and looks up the project's modules on the turn's own goroutine meanwhile (a
// fourth goroutine grew a fresh stack every turn). Counted with the runtime's own count of
// goroutines created; the least of a few tries, so a stray timer elsewhere cannot add one.
func TestLiveContextStartsAGoroutinePerEditorQuestion(t *testing.T) {
	dir := t.TempDir()
	m := NewManager(Deps{
		Client:     nopClient{},
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return &fakeWS{files: map[string]string{}} },
		Providers:  fakeSource{p: &loopProvider{reply: func(int) []providers.Event { return textReply("ok") }}},
		Tools:      tools.NewRegistry(readTool{}),
		Settings:   func() config.Settings { return config.Settings{} },
		StateDir:   t.TempDir(),
		NoTitles:   true,
	})
	defer m.Shutdown(context.Background())
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := m.get(ns.SessionID)
	created := func() uint64 {
		sample := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	tr := &turn{s: s, ctx: context.Background(), set: m.settings()}
	tr.liveContext() // the first looks for modules on disk
	least := uint64(1 << 62)
	for range 5 {
		tr.editor = nil
		before := created()
		tr.liveContext()
		least = min(least, created()-before)
	}
	if least != 3 {
		t.Errorf("a live context started %d goroutines, want 3 (dirty buffers, diagnostics, the editor's state)", least)
	}
}
