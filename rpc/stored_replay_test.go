package rpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
)

// storedLines is a planted transcript: the updates agentd writes, and lines that try to add a
// method, an id or another session to the notification a load replays them in, or are not JSON.
const storedAt = `"at":"2026-12-02T10:00:00Z"`

var storedGood = []string{
	`{"sessionUpdate":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"fix a.txt"}}`,
	`{"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read a.txt","kind":"read","status":"completed","rawInput":{"path":"a.txt"}}`,
	`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"done \"quoted\" \u2028 <b>"}}`,
}

func plantTranscript(t *testing.T) string {
	t.Helper()
	lines := []string{`{"t":"session",` + storedAt + `,"session":{"id":"s1","cwd":"/p","created":"2026-12-02T10:00:00Z"}}`}
	for _, u := range storedGood {
		lines = append(lines, `{"t":"update",`+storedAt+`,"update":`+u+`}`)
	}
	lines = append(lines,
		`{"t":"update",`+storedAt+`,"method":"agent/x/evil","update":{"sessionUpdate":"plan"}}`,
		`{"t":"update",`+storedAt+`,"update":{"sessionUpdate":"plan","sessionId":"evil"}}`,
		`{"t":"update",`+storedAt+`,"update":{"sessionUpdate":"plan"}},"method":"agent/x/evil","params":{"sessionId":"evil","update":{}}}`,
		`{"t":"update",`+storedAt+`,"update":{"sessionUpdate":"plan","id":1,"result":{"evil":true}}}`,
		`{"t":"update",`+storedAt+`,"update":{"sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":"torn evil`,
	)
	state := t.TempDir()
	dir := filepath.Join(state, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s1.jsonl"), []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return state
}

// Through the LSP door, a load replays the stored updates agentd wrote byte for byte as the
// params' update, in order, and nothing of the planted lines: no other method, no id, no other
// session.
func TestLoadReplaysStoredUpdatesAsTheyAreLSP(t *testing.T) {
	h := startServer(t, Options{StateDir: plantTranscript(t)})
	h.initialize(t, nil)
	wantResult(t, h.call(protocol.MethodSessionLoad, map[string]any{"sessionId": "s1", "cwd": t.TempDir()}), nil)
	var got []string
	for done := false; !done; {
		select {
		case n := <-h.notes:
			if strings.Contains(string(n.Params), "evil") || n.Method != protocol.MethodSessionUpdate && n.Method != "window/showMessage" {
				t.Errorf("planted: %s %s", n.Method, n.Params)
			}
			var p struct {
				SessionID string          `json:"sessionId"`
				Update    json.RawMessage `json:"update"`
			}
			if n.Method == protocol.MethodSessionUpdate {
				if err := json.Unmarshal(n.Params, &p); err != nil || p.SessionID != "s1" {
					t.Errorf("params %s: %v", n.Params, err)
				}
				got = append(got, string(p.Update))
			}
		case <-time.After(300 * time.Millisecond):
			done = true
		}
	}
	if len(got) < len(storedGood) {
		t.Fatalf("replayed %q", got)
	}
	for i, want := range storedGood {
		if got[i] != want {
			t.Errorf("update %d replayed as\n%s\nwant\n%s", i, got[i], want)
		}
	}
	for _, u := range got[len(storedGood):] {
		if !strings.Contains(u, protocol.UpdateAvailableCommandsUpdate) {
			t.Errorf("replayed after the stored updates: %s", u)
		}
	}
}

// Through the ACP door the same, as session/update lines: each line one JSON message.
func TestLoadReplaysStoredUpdatesAsTheyAreACP(t *testing.T) {
	h := startACP(t, Options{StateDir: plantTranscript(t)})
	h.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1}})
	h.answer(1)
	h.send(map[string]any{"id": 2, "method": "session/load", "params": map[string]any{"sessionId": "s1", "cwd": t.TempDir(), "mcpServers": []any{}}})
	var got []string
	for done := false; !done; {
		select {
		case line := <-h.raw:
			if strings.Contains(line, "evil") {
				t.Errorf("planted: %s", line)
			}
			var m struct {
				Method string `json:"method"`
				Params struct {
					SessionID string          `json:"sessionId"`
					Update    json.RawMessage `json:"update"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Errorf("line %q: %v", line, err)
			}
			if m.Method == "session/update" {
				if m.Params.SessionID != "s1" {
					t.Errorf("line %s", line)
				}
				got = append(got, string(m.Params.Update))
			}
		case <-time.After(300 * time.Millisecond):
			done = true
		}
	}
	if len(got) < len(storedGood) {
		t.Fatalf("replayed %q", got)
	}
	for i, want := range storedGood {
		if got[i] != want {
			t.Errorf("update %d replayed as\n%s\nwant\n%s", i, got[i], want)
		}
	}
}
