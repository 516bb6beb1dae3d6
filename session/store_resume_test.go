package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

// A resume reads the transcript without decoding its updates, and must not read the session
// any differently from a load: the same history (compacted and truncated), title, mode,
// usage, cost, rewinds and last-updated time; only the replay is left out. A torn update line
// at the end moves no time.
func TestResumeReadsWhatLoadReads(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 12, 2, 10, 0, s, 0, time.UTC) }
	msg := func(role providers.Role, text string) *providers.Message {
		return &providers.Message{Role: role, Parts: []providers.Part{{Type: providers.PartText, Text: text}}}
	}
	used := 10
	recs := []record{
		{T: recHeader, At: at(0), Header: &header{ID: "s1", Cwd: "/p"}},
		{T: recMessage, At: at(1), Message: msg(providers.RoleUser, "one")},
		{T: recUpdate, At: at(2), Update: &protocol.SessionUpdate{SessionUpdate: protocol.UpdateUserMessageChunk, MessageID: "m1", Content: &protocol.ContentBlock{Type: "text", Text: "one"}}},
		{T: recMessage, At: at(3), Message: msg(providers.RoleAssistant, "two")},
		{T: recCompact, At: at(4), Summary: "the summary", Keep: 1},
		{T: recTitle, At: at(5), Title: "a title"},
		{T: recConfig, At: at(6), Mode: "plan"},
		{T: recMessage, At: at(7), Message: msg(providers.RoleUser, "three")},
		{T: recUsage, At: at(8), Update: &protocol.SessionUpdate{SessionUpdate: protocol.UpdateUsageUpdate, Used: &used}, Cost: &protocol.Cost{Amount: 1.5, Currency: "USD"}},
		{T: recMessage, At: at(9), Message: msg(providers.RoleAssistant, "four")},
		{T: recTruncate, At: at(10), Keep: 4, MessageID: "m1"},
		{T: recUpdate, At: at(11), Update: &protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: "m2", Content: &protocol.ContentBlock{Type: "text", Text: "x"}}},
	}
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	var data []byte
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, b...), '\n')
	}
	data = append(data, `{"t":"update","at":"2026-12-02T11:00:00Z","update":{"sessionUpd`...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(replay bool) *loaded {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		l, err := readTranscriptFor(f, true, replay, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	load, resume := read(true), read(false)
	if len(load.replay) == 0 || len(resume.replay) != 0 {
		t.Fatalf("replay: load %d updates, resume %d (want some; none)", len(load.replay), len(resume.replay))
	}
	if !resume.updated.Equal(at(11)) {
		t.Fatalf("resume's updated = %v, want %v (the last whole record's)", resume.updated, at(11))
	}
	load.replay, load.arena = nil, nil // the replay and the bytes it holds
	if !reflect.DeepEqual(load, resume) {
		t.Fatalf("resume read\n%+v\nload read\n%+v", resume, load)
	}
	if len(resume.history) != 4 || resume.title != "a title" || resume.mode != "plan" || resume.cost == nil || len(resume.rewinds) != 2 {
		t.Fatalf("resume read history %d, title %q, mode %q, cost %v, rewinds %d", len(resume.history), resume.title, resume.mode, resume.cost, len(resume.rewinds))
	}
}
