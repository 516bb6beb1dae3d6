package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
)

// writeLog records every Write and reports it on a channel.
type writeLog struct {
	mu     sync.Mutex
	writes [][]byte
	wrote  chan struct{}
}

func newWriteLog() *writeLog { return &writeLog{wrote: make(chan struct{}, 1<<10)} }

func (w *writeLog) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, bytes.Clone(b))
	w.mu.Unlock()
	w.wrote <- struct{}{}
	return len(b), nil
}

func (w *writeLog) Close() error { return nil }

// await waits for the next Write. There is no deadline to meet, only a test that would hang.
func (w *writeLog) await(t *testing.T, what string) {
	t.Helper()
	select {
	case <-w.wrote:
	case <-time.After(time.Minute):
		t.Fatalf("%s was never written", what)
	}
}

// frames decodes every frame written, as "kind/message/text".
func (w *writeLog) frames(t *testing.T) []string {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var got []string
	for _, n := range updatesIn(t, w.writes) {
		u := n.Update
		text := ""
		if u.Content != nil {
			text = u.Content.Text
		}
		got = append(got, u.SessionUpdate+"/"+u.MessageID+"/"+text)
	}
	return got
}

// updatesIn decodes the session updates framed in writes, in order.
func updatesIn(t *testing.T, writes [][]byte) []protocol.SessionNotification {
	t.Helper()
	var out []protocol.SessionNotification
	for _, b := range writes {
		r := bufio.NewReader(bytes.NewReader(b))
		for {
			body, err := ReadFrame(r, nil, MaxContentLength)
			if err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			var m struct{ Params protocol.SessionNotification }
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m.Params)
		}
	}
	return out
}

func messageChunk(msg, text string) *protocol.SessionNotification {
	return &protocol.SessionNotification{SessionID: "s", Update: protocol.SessionUpdate{
		SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: msg, Content: &protocol.ContentBlock{Type: "text", Text: text}}}
}

// A message streaming fast costs a frame per chunkPace, not one per chunk the idle writer
// happens to find: with the clock stopped (so neither the pace nor coalesceSpan passes), 1,000
// chunks sent after the first is written make one frame. The first chunk of a message goes at once, and so does anything that
// is not a chunk, with the held text ahead of it.
func TestFastMessageChunksArePaced(t *testing.T) {
	w := newWriteLog()
	s := NewStream(nopReader{}, w, nil)
	s.now = func() time.Time { return time.Unix(0, 0) }
	send := func(n *protocol.SessionNotification) {
		t.Helper()
		if err := s.WriteSessionUpdate(n); err != nil {
			t.Fatal(err)
		}
	}
	send(messageChunk("m1", "first"))
	w.await(t, "the first chunk of a message")
	const n = 1000
	for range n {
		send(messageChunk("m1", "x"))
	}
	send(messageChunk("m2", "other"))
	w.await(t, "the first chunk of the next message")
	send(&protocol.SessionNotification{SessionID: "s", Update: protocol.SessionUpdate{SessionUpdate: protocol.UpdatePlan}})
	w.await(t, "a plan behind held chunks")
	s.Close()

	want := []string{
		"agent_message_chunk/m1/first",
		"agent_message_chunk/m1/" + strings.Repeat("x", n),
		"agent_message_chunk/m2/other",
		"plan//",
	}
	if got := w.frames(t); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("frames:\n%.200s\nwant:\n%.200s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A held chunk is written when its pace has passed, with nothing else sent behind it.
func TestHeldChunkIsWrittenWhenItsPaceHasPassed(t *testing.T) {
	w := newWriteLog()
	s := NewStream(nopReader{}, w, nil)
	defer s.Close()
	s.pace = time.Millisecond
	s.WriteSessionUpdate(messageChunk("m", "a"))
	w.await(t, "the first chunk")
	s.WriteSessionUpdate(messageChunk("m", "b"))
	w.await(t, "a chunk held for its pace")
	if got := w.frames(t); strings.Join(got, " ") != "agent_message_chunk/m/a agent_message_chunk/m/b" {
		t.Fatalf("frames = %v", got)
	}
}

// A chunk that comes chunkPace or more after the last one of its message went out is not held.
func TestChunkAfterItsPaceIsNotHeld(t *testing.T) {
	w := newWriteLog()
	s := NewStream(nopReader{}, w, nil)
	defer s.Close()
	var mu sync.Mutex
	clock := time.Unix(0, 0)
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	s.pace = time.Hour // on the fake clock; the real one never reaches it in this test
	for i, text := range []string{"a", "b", "c"} {
		s.WriteSessionUpdate(messageChunk("m", text))
		w.await(t, "chunk "+text)
		mu.Lock()
		clock = clock.Add(time.Hour)
		mu.Unlock()
		if got := w.frames(t); len(got) != i+1 {
			t.Fatalf("after chunk %q, frames = %v", text, got)
		}
	}
}
