package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

func TestSessionsOutliveTheDaemon(t *testing.T) {
	h := newHarness(t,
		reply{events: append([]providers.Event{{Type: providers.EventThinkingDelta, Text: "let me see"}}, callsReply(tc{"e1", "edit_file", `{"path":"a.txt","old":"alpha","new":"ALPHA"}`})...)},
		reply{events: textReply("Edited a.txt.")},
	)
	h.set.Mode = ModeAuto
	h.newSession()
	h.prompt("fix a.txt")
	h.client.waitFor(t, "title", func(us []protocol.SessionUpdate) bool { return len(kinds(us, protocol.UpdateSessionInfoUpdate)) == 1 })
	sid := h.sid
	if err := h.m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	// A new daemon lists, loads (replaying) and continues the session.
	h.m = h.manager()
	h.client = newFakeClient()
	h.m.d.Client = h.client
	list, err := h.m.List(context.Background(), protocol.SessionListParams{Cwd: h.dir})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid || list.Sessions[0].Title != "Test title" || list.Sessions[0].UpdatedAt == "" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if other, _ := h.m.List(context.Background(), protocol.SessionListParams{Cwd: "/elsewhere"}); len(other.Sessions) != 0 {
		t.Fatalf("cwd filter: %+v", other)
	}
	if _, err := h.m.Load(context.Background(), protocol.SessionLoadParams{SessionID: sid, Cwd: h.dir}); err != nil {
		t.Fatal(err)
	}
	us := h.client.snapshot()
	var seq []string
	for _, u := range us {
		seq = append(seq, u.SessionUpdate)
	}
	got := strings.Join(seq, ",")
	want := "user_message_chunk,agent_thought_chunk,tool_call,agent_message_chunk,session_info_update"
	if !strings.HasPrefix(got, want) {
		t.Fatalf("replay = %s\nwant prefix %s", got, want)
	}
	tcall := kinds(us, protocol.UpdateToolCall)[0]
	if tcall.Status != protocol.StatusCompleted || tcall.Title == "" || tcall.ToolContent[0].Type != "diff" || *tcall.ToolContent[0].NewText != "ALPHA\n" || len(tcall.RawInput) == 0 {
		t.Fatalf("replayed call: %s", dumpUpdates([]protocol.SessionUpdate{tcall}))
	}
	h.sid = sid
	h.prov.mu.Lock()
	h.prov.replies = []reply{{events: textReply("still here")}}
	h.prov.mu.Unlock()
	h.prompt("and now?")
	reqs := h.prov.requests()
	msgs := reqs[len(reqs)-1].Messages
	if len(msgs) != 5 || msgs[0].Parts[0].Text != "fix a.txt" || msgs[4].Parts[0].Text != "and now?" {
		t.Fatalf("history after load: %+v", msgs)
	}

	// Delete removes it for good.
	if err := h.m.Delete(context.Background(), sid); err != nil {
		t.Fatal(err)
	}
	if _, err := h.m.Resume(context.Background(), protocol.SessionLoadParams{SessionID: sid, Cwd: h.dir}); err == nil {
		t.Fatal("resumed a deleted session")
	}
	if list, _ := h.m.List(context.Background(), protocol.SessionListParams{}); len(list.Sessions) != 0 {
		t.Fatalf("list after delete: %+v", list)
	}
}

func TestTornLastLineLosesOnlyThatEvent(t *testing.T) {
	h := newHarness(t, reply{events: textReply("one")}, reply{events: textReply("two")})
	h.newSession()
	h.prompt("first")
	sid := h.sid
	_ = h.m.Shutdown(context.Background())
	path := filepath.Join(h.state, "sessions", sid+".jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"t":"message","message":{"role":"user","parts":[{"type":"text","te`) // kill -9 mid-write
	f.Close()

	h.m = h.manager()
	if _, err := h.m.Resume(context.Background(), protocol.SessionLoadParams{SessionID: sid, Cwd: h.dir}); err != nil {
		t.Fatal(err)
	}
	h.prompt("second")
	reqs := h.prov.requests()
	msgs := reqs[len(reqs)-1].Messages
	if len(msgs) != 3 || msgs[0].Parts[0].Text != "first" || msgs[1].Parts[0].Text != "one" || msgs[2].Parts[0].Text != "second" {
		t.Fatalf("history: %+v", msgs)
	}
	// The record written after the torn line is readable too.
	_ = h.m.Shutdown(context.Background())
	h.m = h.manager()
	if _, err := h.m.Resume(context.Background(), protocol.SessionLoadParams{SessionID: sid, Cwd: h.dir}); err != nil {
		t.Fatal(err)
	}
	s, _ := h.m.get(sid)
	if n := len(s.historySnapshot()); n != 4 {
		t.Fatalf("history after second reload has %d messages, want 4", n)
	}
}

func TestElisionKeepsRecentResultsAndText(t *testing.T) {
	big := strings.Repeat("x", 5000)
	var hist []providers.Message
	for i := range 6 {
		hist = append(hist,
			providers.Message{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartText, Text: big}, {Type: providers.PartToolCall, ToolCallID: string(rune('a' + i)), ToolName: "read_file"}}},
			providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartToolResult, ToolCallID: string(rune('a' + i)), ToolName: "read_file", Text: big}}},
		)
	}
	out := elideToolResults(hist, 4, 400, 1, 0)
	for i, m := range out {
		for _, p := range m.Parts {
			switch {
			case p.Type == providers.PartText && p.Text != big:
				t.Fatalf("message %d text changed", i)
			case p.Type == providers.PartToolResult && i < 4 && !strings.Contains(p.Text, "call the tool again"):
				t.Fatalf("old result %d not elided", i)
			case p.Type == providers.PartToolResult && i >= 4 && p.Text != big:
				t.Fatalf("recent result %d elided", i)
			}
		}
	}
	if hist[1].Parts[0].Text != big {
		t.Fatal("the stored history was modified")
	}
}

// An older result's images are elided with it, whatever its text's length; a newer result keeps
// its images, and the stored history keeps all of them.
func TestElisionTakesOlderResultsImages(t *testing.T) {
	shot := providers.Part{Type: providers.PartImage, MimeType: "image/png", Data: []byte("\x89PNG")}
	var hist []providers.Message
	for _, id := range []string{"old", "new"} {
		img := shot
		img.ToolCallID = id
		hist = append(hist, providers.Message{Role: providers.RoleUser, Parts: []providers.Part{
			{Type: providers.PartToolResult, ToolCallID: id, ToolName: "screenshot", Text: "[image 1 of this result (image/png) follows]"}, img}})
	}
	out := elideToolResults(hist, 1, 400, 1, 0)
	if p := out[0].Parts[1]; p.Type != providers.PartText || !strings.Contains(p.Text, "older tool result") {
		t.Errorf("the older result's image = %+v, want a note that it was elided", p)
	}
	if p := out[1].Parts[1]; p.Type != providers.PartImage || p.ToolCallID != "new" {
		t.Errorf("the newer result's image = %+v, want it sent", p)
	}
	if hist[0].Parts[1].Type != providers.PartImage {
		t.Error("the stored history was modified")
	}
}

// TestElisionMovesInBlocks: with keep 2 and block 3 the boundary jumps by three results once
// five are unelided, so between 2 and 4 of the newest results are sent whole.
func TestElisionMovesInBlocks(t *testing.T) {
	big := strings.Repeat("y", 3000)
	var hist []providers.Message
	wants := []int{1, 2, 3, 4, 2, 3, 4, 2, 3} // results sent whole after the 1st..9th
	for n := 1; n <= 9; n++ {
		hist = append(hist, providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartToolResult, ToolCallID: fmt.Sprint(n), ToolName: "read_file", Text: big}}})
		out := elideToolResults(hist, 2, 400, 3, 0)
		whole := 0
		for i, m := range out {
			if m.Parts[0].Text == big {
				whole++
			} else if i >= len(out)-2 || !strings.Contains(m.Parts[0].Text, "call the tool again") {
				t.Fatalf("%d results: result %d is %q", n, i, clip.String(m.Parts[0].Text, 80, ""))
			}
		}
		if whole != wants[n-1] {
			t.Fatalf("%d results: %d sent whole, want %d", n, whole, wants[n-1])
		}
	}
}

func TestCompactCommandSummarizes(t *testing.T) {
	h := newHarness(t, reply{events: textReply("answer one")}, reply{events: textReply("after compaction")})
	h.newSession()
	h.prompt("first question")
	if res := h.prompt("/compact"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	cs := kinds(h.client.snapshot(), protocol.UpdateCompactionUpdate)
	if len(cs) != 2 || cs[1].Status != "completed" || cs[1].Summary != "SUMMARY of earlier work" {
		t.Fatalf("compaction updates: %s", dumpUpdates(cs))
	}
	h.prompt("next")
	reqs := h.prov.requests()
	msgs := reqs[len(reqs)-1].Messages
	if len(msgs) != 3 || !strings.Contains(msgs[0].Parts[0].Text, "SUMMARY of earlier work") {
		t.Fatalf("history after compaction: %+v", msgs)
	}
}

func TestAutomaticCompactionPastTheThreshold(t *testing.T) {
	h := newHarness(t, reply{events: textReply("one")}, reply{events: textReply("two")}, reply{events: textReply("three")})
	h.set.Providers["fake"] = config.ProviderSettings{APIType: "fake", Model: "fake-model", ContextWindow: 120}
	h.set.CompactThreshold = 0.8
	h.newSession()
	h.prompt("first")
	h.prompt("second")
	if n := len(kinds(h.client.snapshot(), protocol.UpdateCompactionUpdate)); n != 0 {
		t.Fatalf("compacted too early (%d updates)", n)
	}
	h.prompt("third")
	cs := kinds(h.client.snapshot(), protocol.UpdateCompactionUpdate)
	if len(cs) != 2 || cs[1].Status != "completed" {
		t.Fatalf("compaction updates: %s", dumpUpdates(cs))
	}
	reqs := h.prov.requests()
	msgs := reqs[len(reqs)-1].Messages
	if len(msgs) != 3 || !strings.Contains(msgs[0].Parts[0].Text, "SUMMARY") || msgs[2].Parts[0].Text != "third" {
		t.Fatalf("history sent after compaction: %+v", msgs)
	}
}

func TestContextOverflowCompactsAndRetries(t *testing.T) {
	h := newHarness(t, reply{events: textReply("one")}, reply{events: textReply("two")},
		reply{events: []providers.Event{{Type: providers.EventFailed, Err: &providers.Error{Kind: providers.ErrContextOverflow, Message: "too long"}}}},
		reply{events: textReply("three")})
	h.newSession()
	h.prompt("first")
	h.prompt("second")
	if res := h.prompt("third"); res.StopReason != protocol.StopEndTurn || res.Meta != nil {
		t.Fatalf("result %+v", res)
	}
	reqs := h.prov.requests()
	if msgs := reqs[len(reqs)-1].Messages; !strings.Contains(msgs[0].Parts[0].Text, "SUMMARY") {
		t.Fatalf("retry did not send the compacted history: %+v", msgs)
	}
}

// TestRecordWriteAllocatesLessThanMarshal: a record goes to the file as json.Marshal encodes it,
// newline-terminated, without the copy of Marshal's result and the reallocation for the newline.
func TestRecordWriteAllocatesLessThanMarshal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "s.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sf := &sessionFile{f: f}
	defer sf.close()
	msg := providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartToolResult, ToolCallID: "c1", ToolName: "read_file", Text: strings.Repeat("1\thello, world\n", 200)}}}
	r := record{T: recMessage, At: time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC), Message: &msg}
	if err := sf.write(r); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(r)
	got, _ := os.ReadFile(f.Name())
	if string(got) != string(want)+"\n" {
		t.Fatalf("wrote %s\nwant %s", got, want)
	}
	if raceEnabled {
		t.Skip("allocation counts mean nothing under the race detector (its sync.Pool drops buffers at random)")
	}
	marshal := testing.AllocsPerRun(20, func() { json.Marshal(r) })
	write := testing.AllocsPerRun(20, func() { sf.write(r) })
	if write >= marshal {
		t.Errorf("writing a record costs %.0f allocations, json.Marshal alone %.0f", write, marshal)
	}
}
