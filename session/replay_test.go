package session

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// storingClient takes stored updates as they are (as the editor bridge does) and decoded ones,
// in one sequence.
type storingClient struct {
	nopClient
	mu     sync.Mutex
	raw    [][]byte // nil for a decoded one
	update []protocol.SessionUpdate
}

func (c *storingClient) Update(_ string, u protocol.SessionUpdate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw, c.update = append(c.raw, nil), append(c.update, u)
}

func (c *storingClient) UpdateStored(_, kind string, b []byte) {
	var u protocol.SessionUpdate
	if err := json.Unmarshal(b, &u); err != nil || u.SessionUpdate != kind {
		panic("a stored update that does not decode to its kind: " + string(b))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw, c.update = append(c.raw, bytes.Clone(b)), append(c.update, u)
}

// decodingClient takes decoded updates only (agentd exec's terminal, the tests' fakes).
type decodingClient struct {
	nopClient
	update []protocol.SessionUpdate
}

func (c *decodingClient) Update(_ string, u protocol.SessionUpdate) { c.update = append(c.update, u) }

func loadWith(t *testing.T, stateDir, id string, c Client) {
	t.Helper()
	m := NewManager(Deps{
		Client:     c,
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return &fakeWS{files: map[string]string{}} },
		Providers:  fakeSource{p: &loopProvider{}},
		Tools:      tools.NewRegistry(),
		Settings:   func() config.Settings { return config.Settings{Mode: config.ModeAuto} },
		StateDir:   stateDir,
		NoTitles:   true,
	})
	defer m.Shutdown(context.Background())
	if _, err := m.Load(context.Background(), protocol.SessionLoadParams{SessionID: id, Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
}

// A transcript is a file an attacker may plant. Of its update records a load forwards as they
// are only those agentd's own encoder writes; a line that names a JSON-RPC envelope key (at the
// record's level or the update's), another session, an escaped key, an unknown key, a duplicate
// kind, invalid JSON, a line over maxStoredUpdate or a torn last line is dropped, skipped or
// decoded (which keeps only SessionUpdate's fields), never forwarded as it is. What a client
// that takes stored updates is shown is what a decoding client is shown.
func TestLoadForwardsOnlyWhatAgentdWrites(t *testing.T) {
	const at = `"at":"2026-12-02T10:00:00Z"`
	good := []string{
		`{"t":"update",` + at + `,"update":{"sessionUpdate":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"fix a.txt"}}}`,
		`{"t":"update",` + at + `,"update":{"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read a.txt","kind":"read","status":"completed","rawInput":{"path":"a.txt","method":"not the envelope's"}}}`,
		`{"t":"update",` + at + `,"update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"done \"quoted\" \u2028"}},"parentToolCallId":"a1"}`,
	}
	hostile := map[string]string{
		"method beside the update": `{"t":"update",` + at + `,"method":"agent/x/evil","update":{"sessionUpdate":"plan"}}`,
		"another session's record": `{"t":"update",` + at + `,"sessionId":"other","update":{"sessionUpdate":"plan"}}`,
		"sessionId in the update":  `{"t":"update",` + at + `,"update":{"sessionUpdate":"plan","sessionId":"other"}}`,
		"method in the update":     `{"t":"update",` + at + `,"update":{"sessionUpdate":"plan","method":"agent/x/evil"}}`,
		"id in the update":         `{"t":"update",` + at + `,"update":{"sessionUpdate":"plan","id":7,"result":{}}}`,
		"not JSON":                 `{"t":"update",` + at + `,"update":{"sessionUpdate":"plan"}},"method":"agent/x/evil"}`,
		"not JSON either":          `{"t":"update",` + at + `,"update":{"sessionUpdate":"plan",}}`,
		"huge":                     `{"t":"update",` + at + `,"update":{"sessionUpdate":"agent_message_chunk","messageId":"m9","content":{"type":"text","text":"` + strings.Repeat("x", maxStoredUpdate) + `"}}}`,
	}
	// Decoded (not forwarded as they are): what reaches the client has only SessionUpdate's fields.
	decoded := map[string]string{
		"escaped key":    `{"t":"update",` + at + `,"update":{"sessionUpdate":"plan","meth\u006fd":"agent/x/evil"}}`,
		"unknown key":    `{"t":"update",` + at + `,"update":{"sessionUpdate":"plan","evil":{"method":"x"}}}`,
		"kind twice":     `{"t":"update",` + at + `,"update":{"sessionUpdate":"notice","sessionUpdate":"plan"}}`,
		"kind not first": `{"t":"update",` + at + `,"update":{"status":"pending","sessionUpdate":"plan"}}`,
		"older format":   `{"t":"update",` + at + `,"update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"no id"}}}`,
	}
	lines := []string{`{"t":"session",` + at + `,"session":{"id":"s1","cwd":"/p","created":"2026-12-02T10:00:00Z"}}`}
	lines = append(lines, good...)
	for _, l := range hostile {
		lines = append(lines, l)
	}
	for _, l := range decoded {
		lines = append(lines, l)
	}
	lines = append(lines, good[0][:len(good[0])-9]) // torn
	state := t.TempDir()
	dir := filepath.Join(state, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s1.jsonl"), []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}

	// The dropped ones are counted (the load logs them); the two that are not JSON are skipped.
	f, err := os.Open(filepath.Join(dir, "s1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := readTranscriptFor(f, true, true, nil)
	f.Close()
	if err != nil || l.dropped != len(hostile)-2 {
		t.Fatalf("dropped %d update records (%v), want %d", l.dropped, err, len(hostile)-2)
	}

	sc := &storingClient{}
	loadWith(t, state, "s1", sc)
	dc := &decodingClient{}
	loadWith(t, state, "s1", dc)

	var forwarded int
	for _, b := range sc.raw {
		if b == nil {
			continue
		}
		forwarded++
		for _, bad := range []string{"evil", "other", `"id"`, "xxxxxxxx", "no id"} {
			if bytes.Contains(b, []byte(bad)) {
				t.Errorf("forwarded as it is: %s", b)
			}
		}
	}
	if forwarded != len(good) {
		t.Errorf("%d updates forwarded as they are, want the %d agentd wrote", forwarded, len(good))
	}
	for i, u := range sc.update {
		if u.SessionUpdate == protocol.UpdateAgentMessageChunk && len(u.Content.Text) > 1000 {
			t.Errorf("update %d: the huge line was replayed", i)
		}
		if u.SessionUpdate == protocol.UpdateUserMessageChunk && u.MessageID == "" {
			t.Errorf("update %d: an older user chunk got no message id", i)
		}
	}
	// Three kept and the five decoded (the plan of "kind twice" is the last key's, as
	// encoding/json reads it, on both paths), then the commands every load announces.
	if n := len(sc.update); n != len(good)+len(decoded)+1 || sc.update[n-1].SessionUpdate != protocol.UpdateAvailableCommandsUpdate {
		t.Errorf("%d updates replayed, want %d and the commands:\n%s", len(sc.update), len(good)+len(decoded), dumpUpdates(sc.update))
	}
	// A decoding client is shown the same (message ids given to older chunks aside).
	norm := func(us []protocol.SessionUpdate) []protocol.SessionUpdate {
		out := make([]protocol.SessionUpdate, len(us))
		for i, u := range us {
			if u.Content != nil && u.Content.Text == "no id" {
				u.MessageID = ""
			}
			out[i] = u
		}
		return out
	}
	if !reflect.DeepEqual(norm(sc.update), norm(dc.update)) {
		t.Errorf("a storing client was shown\n%s\na decoding client\n%s", dumpUpdates(sc.update), dumpUpdates(dc.update))
	}
}
