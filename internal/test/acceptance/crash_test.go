package acceptance_test

// Issue 19 item 2: a kill -9 while a reply streams loses nothing the user saw.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/protocol"
)

// TestKill9KeepsTheStreamingReply kills the daemon with SIGKILL while the model's reply streams
// (its text done, a create_file call announced, the call's arguments still coming), then loads
// the session in a new process: the replay holds the whole text and the announced call, marked
// interrupted, and the session takes the next prompt.
func TestKill9KeepsTheStreamingReply(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	text := strings.Repeat("word ", 226) // the 1,130 bytes of the issue
	settings := replay(t, map[string]any{"title": "t", "chunkDelayMs": 2, "responses": []any{
		map[string]any{"text": text, "toolCalls": []any{map[string]any{"id": "cut", "name": "create_file",
			"args": map[string]any{"path": "a.txt", "content": strings.Repeat("line ", 20000)}}}},
	}})
	resumed := replay(t, responses(map[string]any{"text": "resumed"})) // a new process replays from the start
	e := startIn(t, fakeeditor.Full(), settings, "", root)
	sid := e.newSession()
	go e.ed.Prompt(context.Background(), sid, "write it") // ends with the process

	// Kill it once the announced call is in the transcript: the text has streamed by then, the
	// call's arguments have not.
	path := filepath.Join(e.p.state, "agentd", "sessions", sid+".jsonl")
	deadline := time.Now().Add(15 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(`"id":"cut_1"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon saved no streaming reply")
		}
		time.Sleep(5 * time.Millisecond) // polling a file with a deadline
	}
	if err := e.p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.p.waitExit(exitGuard)

	e2 := startIn(t, fakeeditor.Full(), resumed, e.p.state, root)
	var lr protocol.SessionLoadResult
	if err := e2.ed.Call(ctxT(t), protocol.MethodSessionLoad, protocol.SessionLoadParams{SessionID: sid, Cwd: root}, &lr); err != nil {
		t.Fatalf("load: %v", err)
	}
	us := e2.rawUpdates(sid)
	var replayed strings.Builder
	for _, u := range kinds(us, "agent_message_chunk") {
		if obj(u, "_meta", "agentd/interrupted") != true {
			t.Errorf("replayed reply not marked interrupted: %v", u)
		}
		s, _ := obj(u, "content", "text").(string)
		replayed.WriteString(s)
	}
	if replayed.String() != text {
		t.Fatalf("replayed %d bytes of the %d streamed", replayed.Len(), len(text))
	}
	var call map[string]any
	for _, u := range kinds(us, "tool_call") {
		if u["toolCallId"] == "cut_1" { // the replay makes ids unique per turn
			call = u
		}
	}
	if call == nil || call["status"] != "failed" || obj(call, "_meta", "agentd/interrupted") != true {
		t.Fatalf("the announced call replayed as %v", call)
	}
	if res := e2.prompt(sid, "go on"); res.StopReason != "end_turn" {
		t.Fatalf("next prompt: stopReason %q", res.StopReason)
	}
}
