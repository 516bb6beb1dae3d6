package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/internal/test/fakemodel"
)

var (
	baseOnce sync.Once
	baseBin  string
	baseErr  error
)

// baselineBin builds bench/e2e/baselineturn once for the tests, as the driver builds it.
func baselineBin(t *testing.T) string {
	t.Helper()
	baseOnce.Do(func() {
		baseBin, baseErr = buildPkg("github.com/agentd-dev/agentd/bench/e2e/baselineturn", "baselineturn")
	})
	if baseErr != nil {
		t.Fatal(baseErr)
	}
	return baseBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if baseBin != "" {
		os.RemoveAll(filepath.Dir(baseBin))
	}
	os.Exit(code)
}

// setFlags sets the door and -editor-fs for one test.
func setFlags(t *testing.T, door string, fs bool) {
	oldDoor, oldFS := *doorFlag, *editorFS
	*doorFlag, *editorFS = door, fs
	t.Cleanup(func() { *doorFlag, *editorFS = oldDoor, oldFS })
}

// update is the part of a session update notification the tests read.
type update struct {
	Method string `json:"method"`
	ID     any    `json:"id"`
	Params struct {
		SessionID string `json:"sessionId"`
		Path      string `json:"path"`
		Update    struct {
			Kind       string `json:"sessionUpdate"`
			ToolCallID string `json:"toolCallId"`
			Status     string `json:"status"`
			Content    json.RawMessage
		} `json:"update"`
	} `json:"params"`
}

// runTurn drives one two-call turn of the baseline on the door and returns the frames it sent
// and the fake model's requests.
func runTurn(t *testing.T, script fakemodel.Script, prompt string) ([]update, [][]byte, string) {
	t.Helper()
	bin := baselineBin(t)
	fm := fakemodel.New(script)
	url, err := fm.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer fm.Close()
	root, err := turnRoot()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	c, sid, err := session(bin, url, root)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	var mu sync.Mutex
	var frames []update
	c.onFrame = func(body []byte) {
		var u update
		if err := json.Unmarshal(body, &u); err != nil {
			t.Errorf("frame %q: %v", body, err)
		}
		mu.Lock()
		frames = append(frames, u)
		mu.Unlock()
	}
	if err := c.prompt(sid, prompt, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return frames, fm.Requests(), sid
}

// TestBaselineTwoCallTurn checks that the baseline performs the bench's two-call turn on both
// doors: two model calls, the second carrying the file read by the first's tool call (from the
// disk, or through the driver's read_text_file with -editor-fs), the tool call and the reply
// streamed as the door's session updates, and end_turn.
func TestBaselineTwoCallTurn(t *testing.T) {
	for _, tc := range []struct {
		door string
		fs   bool
	}{{"lsp", false}, {"acp", false}, {"lsp", true}, {"acp", true}} {
		name := tc.door
		if tc.fs {
			name += "-editor-fs"
		}
		t.Run(name, func(t *testing.T) {
			setFlags(t, tc.door, tc.fs)
			frames, reqs, sid := runTurn(t, twoCallScript(1), "read a.txt")
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			if !strings.Contains(string(reqs[1]), `"tool_call_id":"call_fake_1_0"`) || !strings.Contains(string(reqs[1]), `hello, world\nhello, world`) {
				t.Errorf("second model request lacks the read_file result: %.400s", reqs[1])
			}
			var kinds, reads []string
			var reply string
			for _, f := range frames {
				switch f.Method {
				case method("agent/session/update"):
					if f.Params.SessionID != sid {
						t.Errorf("update for session %q, want %q", f.Params.SessionID, sid)
					}
					u := f.Params.Update
					// The reply may come in several chunks, as its deltas arrive.
					if k := u.Kind + ":" + u.Status; len(kinds) == 0 || k != kinds[len(kinds)-1] || u.Kind != "agent_message_chunk" {
						kinds = append(kinds, k)
					}
					if u.Kind == "agent_message_chunk" {
						var c struct{ Text string }
						json.Unmarshal(u.Content, &c)
						reply += c.Text
					}
				case method("agent/fs/read_text_file"):
					reads = append(reads, f.Params.Path)
				case "":
				default:
					t.Errorf("unexpected message %q", f.Method)
				}
			}
			if want := "tool_call:pending tool_call_update:completed agent_message_chunk:"; strings.Join(kinds, " ") != want {
				t.Errorf("updates %q, want %q", kinds, want)
			}
			if reply != "The file says hello." {
				t.Errorf("reply %q", reply)
			}
			if tc.fs != (len(reads) == 1) || tc.fs && filepath.Base(reads[0]) != "a.txt" {
				t.Errorf("read_text_file requests %q with -editor-fs %v", reads, tc.fs)
			}
		})
	}
}

// TestBaselineCoalescedDeltas checks the per-delta baseline: every one-character delta reaches
// the client, in order, in agent_message_chunks of at most 4 KB.
func TestBaselineCoalescedDeltas(t *testing.T) {
	for _, door := range []string{"lsp", "acp"} {
		t.Run(door, func(t *testing.T) {
			setFlags(t, door, false)
			var text strings.Builder
			for i := range 9000 {
				text.WriteByte(byte('a' + i%26))
			}
			frames, _, _ := runTurn(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: text.String(), ChunkSize: 1}}}, "hi")
			var got strings.Builder
			n := 0
			for _, f := range frames {
				if f.Params.Update.Kind != "agent_message_chunk" {
					continue
				}
				var c struct{ Text string }
				json.Unmarshal(f.Params.Update.Content, &c)
				if len(c.Text) > maxChunk {
					t.Errorf("a chunk of %d bytes, more than %d", len(c.Text), maxChunk)
				}
				got.WriteString(c.Text)
				n++
			}
			if got.String() != text.String() {
				t.Errorf("the chunks make %d bytes, not the %d streamed", got.Len(), text.Len())
			}
			t.Logf("%d deltas in %d notifications", text.Len(), n)
		})
	}
}

// maxChunk is the baseline's bound on one notification's text (bench/e2e/baselineturn).
const maxChunk = 4 << 10

func TestReadTextFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o644)
	for _, tc := range []struct {
		params, want string
	}{
		{`{"path":` + quote(path) + `}`, `{"jsonrpc":"2.0","id":7,"result":{"content":"one\ntwo\nthree\n"}}`},
		{`{"path":` + quote(path) + `,"line":2,"limit":1}`, `{"jsonrpc":"2.0","id":7,"result":{"content":"two\n"}}`},
		{`{"path":` + quote(path) + `,"line":3}`, `{"jsonrpc":"2.0","id":7,"result":{"content":"three\n"}}`},
		{`{"path":` + quote(path) + `,"line":9}`, `{"jsonrpc":"2.0","id":7,"result":{"content":""}}`},
	} {
		if got := readTextFile(json.RawMessage("7"), []byte(`{"params":`+tc.params+`}`)); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.params, got, tc.want)
		}
	}
	got := readTextFile(json.RawMessage("7"), []byte(`{"params":{"path":`+quote(filepath.Join(dir, "missing"))+`}}`))
	if !strings.Contains(got, `"code":-32002`) {
		t.Errorf("missing file: %s", got)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestLabelOf(t *testing.T) {
	turnBase = "/tmp/baselineturn"
	t.Cleanup(func() { turnBase = "" })
	one, two := []string{"a"}, []string{"a", "b"}
	if got := withBase(two); len(got) != 3 || got[2] != turnBase || len(two) != 2 {
		t.Errorf("withBase = %q", got)
	}
	for _, tc := range []struct {
		j    int
		bins []string
		want string
	}{{0, one, ""}, {1, one, baseLabel}, {0, two, "[1] "}, {1, two, "[2] "}, {2, two, baseLabel}} {
		if got := labelOf(tc.j, tc.bins); got != tc.want {
			t.Errorf("labelOf(%d, %q) = %q, want %q", tc.j, tc.bins, got, tc.want)
		}
	}
}

func TestOverheadPairsRounds(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	// Round 2 ran under load for both: paired, it does not move the overhead.
	got := overhead(ms(5, 15, 6), ms(3, 12, 4))
	if want := ms(2, 3, 2); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("overhead = %v, want %v", got, want)
	}
	if got := overhead(ms(5, 6), ms(3)); len(got) != 1 {
		t.Errorf("overhead of unequal runs = %v", got)
	}
}
