package session

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// cutText is the reply the crash helper's model streams before it stops answering: the 1,130
// bytes of issue 19 that were lost to a kill -9.
var cutText = strings.Repeat("streamed-", 125) + "12345"

// stallingProvider streams cutText, waits past a checkpoint interval, announces a call with
// half its arguments and then says nothing more, as a reply being streamed when the daemon dies.
type stallingProvider struct{}

func (stallingProvider) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		for rest := cutText; len(rest) > 0; {
			n := min(len(rest), 10)
			if !yield(providers.Event{Type: providers.EventTextDelta, Text: rest[:n]}) {
				return
			}
			rest = rest[n:]
		}
		select {
		case <-time.After(2 * checkpointInterval): // so the text is saved by the cadence alone
		case <-ctx.Done():
			return
		}
		if !yield(providers.Event{Type: providers.EventToolCallStarted, ToolCallID: "c-cut", ToolName: "read_file"}) ||
			!yield(providers.Event{Type: providers.EventToolCallArgsDelta, ToolCallID: "c-cut", Text: `{"path":"a.t`}) {
			return
		}
		<-ctx.Done()
	}
}

// TestStreamCrashHelper is the child of TestKill9KeepsTheStreamingReply.
func TestStreamCrashHelper(t *testing.T) {
	state, dir := os.Getenv("AGENTD_STREAM_CRASH_STATE"), os.Getenv("AGENTD_STREAM_CRASH_DIR")
	if state == "" {
		t.Skip("only runs as the child of TestKill9KeepsTheStreamingReply")
	}
	m := NewManager(Deps{
		Client:     nopClient{},
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return &fakeWS{files: map[string]string{}} },
		Providers:  fakeSource{p: stallingProvider{}},
		Tools:      tools.NewRegistry(readTool{}),
		Settings:   func() config.Settings { return config.Settings{} },
		StateDir:   state,
	})
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(ns.SessionID)
	m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("write it")}})
}

// TestKill9KeepsTheStreamingReply kills a daemon while a reply streams and reloads the
// session: the replay shows the text streamed and the call announced, marked interrupted, and
// the model's next request says the reply was cut.
func TestKill9KeepsTheStreamingReply(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	// Kill it once the announced call is saved: the stream is then stalled, as a reply the
	// daemon dies in the middle of.
	state, dir, sid := killChildWhen(t, "TestStreamCrashHelper", "AGENTD_STREAM_CRASH_", "the child saved no streaming reply", func(path string) bool {
		b, err := os.ReadFile(path)
		return err == nil && bytes.Contains(b, []byte(`"c-cut"`))
	})

	h := newHarness(t, reply{events: textReply("resumed")})
	h.state = state
	h.m = h.manager()
	if _, err := h.m.Load(context.Background(), protocol.SessionLoadParams{SessionID: sid, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	h.sid = sid
	replay := h.client.snapshot()
	var text string
	for _, u := range kinds(replay, protocol.UpdateAgentMessageChunk) {
		if u.Meta[metaInterrupted] != true || u.Content == nil {
			t.Fatalf("replayed reply not marked interrupted: %s", dumpUpdates(replay))
		}
		text += u.Content.Text
	}
	if text != cutText {
		t.Fatalf("replayed %d bytes of the %d streamed: %q", len(text), len(cutText), text)
	}
	calls := callUpdates(replay, "c-cut")
	if len(calls) != 1 || calls[0].Status != protocol.StatusFailed || calls[0].Meta[metaInterrupted] != true {
		t.Fatalf("announced call replayed as %s", dumpUpdates(calls))
	}
	if len(kinds(replay, protocol.UpdateNotice)) == 0 {
		t.Fatalf("no notice says the reply was cut: %s", dumpUpdates(replay))
	}

	if res := h.prompt("go on"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	msgs := h.prov.requests()[0].Messages
	checkWellFormed(t, msgs)
	if len(msgs) != 3 || msgs[1].Role != providers.RoleAssistant || !strings.HasPrefix(msgs[1].Parts[0].Text, cutText) ||
		!strings.Contains(msgs[1].Parts[0].Text, "cut off") || !strings.Contains(msgs[1].Parts[0].Text, "read_file") {
		t.Fatalf("the model's next request: %+v", msgs)
	}
	// The cut reply stays in its place: a reload after the new turn has it before "go on".
	l, err := (&store{dir: filepath.Join(state, "sessions")}).load(sid, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.history) != 4 || !strings.HasPrefix(l.history[1].Parts[0].Text, cutText) || l.history[2].Parts[0].Text != "go on" {
		t.Fatalf("history after the next turn: %+v", l.history)
	}
}

// TestReadTranscriptClosesStreamingCheckpoints checks where a reload puts a reply's checkpoints:
// nowhere once its step ended, where it was cut otherwise.
func TestReadTranscriptClosesStreamingCheckpoints(t *testing.T) {
	user := func(s string) record {
		return record{T: recMessage, Message: &providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: s}}}}
	}
	assistant := record{T: recMessage, Message: &providers.Message{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartText, Text: "whole"}}}}
	saved := func(id, text string) record {
		return record{T: recStreaming, Streaming: &streamRecord{MessageID: id, Text: text}}
	}
	done := record{T: recStreaming, Streaming: &streamRecord{MessageID: "m1", Done: true}}
	for name, tc := range map[string]struct {
		records []record
		history []string // role: text of each message
	}{
		"ended with its message":    {[]record{user("a"), saved("m1", "who"), saved("m1", "le"), assistant, done}, []string{"user: a", "assistant: whole"}},
		"ended without a message":   {[]record{user("a"), saved("m1", "x"), done}, []string{"user: a"}},
		"cut at the end":            {[]record{user("a"), saved("m1", "who"), saved("m1", "le")}, []string{"user: a", "assistant: whole\n\n[agentd stopped"}},
		"cut, then the next prompt": {[]record{user("a"), saved("m1", "part"), user("b")}, []string{"user: a", "assistant: part\n\n[agentd", "user: b"}},
		"two cut replies":           {[]record{user("a"), saved("m1", "one"), saved("m2", "two")}, []string{"user: a", "assistant: one", "assistant: two"}},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := os.CreateTemp(t.TempDir(), "*.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			sf := &sessionFile{f: f}
			sf.write(record{T: recHeader, Header: &header{ID: "s"}})
			for _, r := range tc.records {
				sf.write(r)
			}
			f.Seek(0, 0)
			l, err := readTranscript(f, true, nil)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range l.history {
				got = append(got, string(m.Role)+": "+m.Parts[0].Text)
			}
			if len(got) != len(tc.history) {
				t.Fatalf("history %q, want %q", got, tc.history)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.history[i]) {
					t.Fatalf("history %q, want %q", got, tc.history)
				}
			}
		})
	}
}

// TestCheckpointCadence saves at once past checkpointBytes and at once for an announced call,
// and otherwise leaves the save to the timer.
func TestCheckpointCadence(t *testing.T) {
	h := newHarness(t)
	h.newSession()
	s := h.m.sessions[h.sid]
	cp := &checkpointer{s: s}
	a := newAssembly("m1")
	count := func() int {
		b, _ := os.ReadFile(filepath.Join(h.state, "sessions", h.sid+".jsonl"))
		return bytes.Count(b, []byte(`"t":"streaming"`))
	}
	fired := make(chan struct{}, 4)
	save := func() { fired <- struct{}{} }
	a.apply(providers.Event{Type: providers.EventTextDelta, Text: "small"}, nil)
	if cp.progress(a, save); cp.timer == nil || count() != 0 {
		t.Fatalf("a small delta: no timer, or saved at once (%d)", count())
	}
	select {
	case <-fired: // the timer calls save (the stream's saves under its lock)
	case <-time.After(hangGuard):
		t.Fatal("the checkpoint timer never fired")
	}
	a.apply(providers.Event{Type: providers.EventTextDelta, Text: strings.Repeat("x", checkpointBytes)}, nil)
	if cp.progress(a, save); cp.timer != nil || count() != 1 {
		t.Fatalf("%d bytes waiting: saves %d", checkpointBytes, count())
	}
	a.apply(providers.Event{Type: providers.EventToolCallStarted, ToolCallID: "c", ToolName: "read_file"}, nil)
	if cp.progress(a, save); cp.timer != nil || count() != 2 {
		t.Fatalf("an announced call: saves %d", count())
	}
	if cp.progress(a, save); cp.timer != nil {
		t.Fatal("a timer with nothing to save")
	}
	s.record(cp.done(nil, "m1")...)
	if count() != 3 {
		t.Fatalf("no done record: %d", count())
	}
}
