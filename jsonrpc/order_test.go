package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
)

// peer is the far end of a pipe, read frame by frame.
type peer struct {
	t *testing.T
	r *bufio.Reader
	w io.Writer
}

func (p *peer) read() map[string]json.RawMessage {
	p.t.Helper()
	body, err := ReadFrame(p.r, nil, MaxContentLength)
	if err != nil {
		p.t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		p.t.Fatalf("%s: %v", body, err)
	}
	return m
}

func (p *peer) send(body string) {
	fmt.Fprintf(p.w, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

func serve(t *testing.T, handler Handler) (*Conn, *peer) {
	a, b := net.Pipe()
	c := NewConn(a, a, Options{})
	c.Go(context.Background(), handler)
	t.Cleanup(func() { b.Close(); c.Close() })
	return c, &peer{t: t, r: bufio.NewReader(b), w: b}
}

// Every notification handed over before a handler returns is on the wire before its answer,
// although Notify does not wait for the write: the ordered writer alone keeps that order.
func TestUpdatesPrecedeTheirAnswer(t *testing.T) {
	const n = 200
	var c *Conn
	c, p := serve(t, func(ctx context.Context, req *Request) (any, error) {
		return Later(func() (any, error) {
			for i := range n {
				c.Notify(ctx, protocol.MethodSessionUpdate, &protocol.SessionNotification{SessionID: "s",
					Update: protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk,
						Content: &protocol.ContentBlock{Type: "text", Text: fmt.Sprint(i)}}})
			}
			return "done", nil
		}), nil
	})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"prompt"}`)
	// Chunks may arrive joined (see coalesceBytes); their text, in order, is all of it.
	var want, got strings.Builder
	for i := range n {
		fmt.Fprint(&want, i)
	}
	for got.Len() < want.Len() {
		m := p.read()
		if _, isAnswer := m["result"]; isAnswer {
			t.Fatalf("the answer came after %q of %q", got.String(), want.String())
		}
		var params protocol.SessionNotification
		json.Unmarshal(m["params"], &params)
		if params.Update.Content == nil {
			t.Fatalf("update = %s", m["params"])
		}
		got.WriteString(params.Update.Content.Text)
	}
	if got.String() != want.String() {
		t.Fatalf("text = %q, want %q", got.String(), want.String())
	}
	if m := p.read(); string(m["result"]) != `"done"` {
		t.Fatalf("answer = %v", m)
	}
}

// Work scheduled with AfterAnswer goes out after the answer, however early it was scheduled.
func TestAfterAnswerFollowsTheAnswer(t *testing.T) {
	var c *Conn
	c, p := serve(t, func(ctx context.Context, req *Request) (any, error) {
		c.AfterAnswer(req.ID(), func() { c.Notify(ctx, "after", nil) })
		c.Notify(ctx, "before", nil)
		return "answer", nil
	})
	p.send(`{"jsonrpc":"2.0","id":"a","method":"new"}`)
	var got []string
	for range 3 {
		m := p.read()
		if r, ok := m["result"]; ok {
			got = append(got, string(r))
		} else {
			got = append(got, string(m["method"]))
		}
	}
	if fmt.Sprint(got) != `["before" "answer" "after"]` {
		t.Fatalf("order on the wire = %v", got)
	}
}

// gateWriter holds the first Write until released, and records every Write.
type gateWriter struct {
	mu      sync.Mutex
	writes  [][]byte
	entered chan struct{}
	release chan struct{}
}

func (g *gateWriter) Write(b []byte) (int, error) {
	g.mu.Lock()
	first := len(g.writes) == 0
	g.writes = append(g.writes, bytes.Clone(b))
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.release
	}
	return len(b), nil
}

func (g *gateWriter) Close() error { return nil }

// Frames queued while a write is in progress leave together, in one Write, in order.
func TestFramesQueuedDuringAWriteShareOneWrite(t *testing.T) {
	g := &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
	s := NewStream(nopReader{}, g, nil)
	note := func(i int) {
		if err := s.WriteSessionUpdate(&protocol.SessionNotification{SessionID: "s", Update: protocol.SessionUpdate{
			SessionUpdate: protocol.UpdatePlan, Entries: []protocol.PlanEntry{{Content: fmt.Sprint(i)}}}}); err != nil {
			t.Fatal(err)
		}
	}
	note(0)
	<-g.entered // the writer holds frame 0
	for i := 1; i <= 5; i++ {
		note(i)
	}
	close(g.release)
	s.Close()
	if len(g.writes) != 2 {
		t.Fatalf("%d writes, want 2 (the first frame, then the five queued behind it)", len(g.writes))
	}
	r := bufio.NewReader(bytes.NewReader(g.writes[1]))
	for i := 1; i <= 5; i++ {
		body, err := ReadFrame(r, nil, MaxContentLength)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Contains(body, fmt.Appendf(nil, `"content":"%d"`, i)) {
			t.Fatalf("frame %d = %s", i, body)
		}
	}
}

// Close writes what is queued before closing.
func TestCloseWritesWhatIsQueued(t *testing.T) {
	var out bytes.Buffer
	s := NewStream(nopReader{}, discardCloser{&out}, nil)
	plan := &protocol.SessionNotification{SessionID: "s", Update: protocol.SessionUpdate{SessionUpdate: protocol.UpdatePlan}}
	for range 3 {
		s.WriteSessionUpdate(plan)
	}
	s.Close()
	r := bufio.NewReader(&out)
	for i := range 3 {
		if _, err := ReadFrame(r, nil, MaxContentLength); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if err := s.WriteSessionUpdate(benchNotification()); err == nil {
		t.Error("a write after Close succeeded")
	}
}

func chunk(session, kind, text string) *protocol.SessionNotification {
	return &protocol.SessionNotification{SessionID: session, Update: protocol.SessionUpdate{
		SessionUpdate: kind, MessageID: "m", Content: &protocol.ContentBlock{Type: "text", Text: text}}}
}

// Chunks queued while a write is in progress join the chunk before them when they share its
// session, kind and message, up to coalesceBytes; the first chunk is never held back.
func TestChunksJoinWhileTheWriterIsBusy(t *testing.T) {
	g := &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
	s := NewStream(nopReader{}, g, nil)
	send := func(n *protocol.SessionNotification) {
		if err := s.WriteSessionUpdate(n); err != nil {
			t.Fatal(err)
		}
	}
	msg, thought := protocol.UpdateAgentMessageChunk, protocol.UpdateAgentThoughtChunk
	send(chunk("s", msg, "first"))
	<-g.entered // the first chunk went out alone, at once
	for _, c := range "abc" {
		send(chunk("s", msg, string(c)))
	}
	send(chunk("s", thought, "t1"))
	send(chunk("s", thought, "t2"))
	send(chunk("other", thought, "o"))
	send(&protocol.SessionNotification{SessionID: "s", Update: protocol.SessionUpdate{SessionUpdate: protocol.UpdatePlan}})
	send(chunk("s", msg, "d"))
	big := strings.Repeat("x", coalesceBytes/2+1)
	send(chunk("s", msg, big))
	send(chunk("s", msg, big)) // would pass coalesceBytes
	close(g.release)
	s.Close()

	var got []string
	for _, n := range updatesIn(t, g.writes) {
		text := ""
		if n.Update.Content != nil {
			text = strings.ReplaceAll(n.Update.Content.Text, big, "BIG")
		}
		got = append(got, n.SessionID+"/"+n.Update.SessionUpdate+"/"+text)
	}
	want := []string{
		"s/agent_message_chunk/first",
		"s/agent_message_chunk/abc",
		"s/agent_thought_chunk/t1t2",
		"other/agent_thought_chunk/o",
		"s/plan/",
		"s/agent_message_chunk/dBIG",
		"s/agent_message_chunk/BIG",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("frames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(g.writes) != 2 {
		t.Errorf("%d writes, want 2", len(g.writes))
	}
}

// A well-framed body that is not JSON is answered -32700 with a null id, and the connection
// goes on: its length was right, so the next frame is found.
func TestNotJSONIsAParseErrorAndReadingGoesOn(t *testing.T) {
	_, p := serve(t, func(ctx context.Context, req *Request) (any, error) { return "ok", nil })
	p.send(`{oops!}`)
	m := p.read()
	var e struct{ Code int }
	json.Unmarshal(m["error"], &e)
	if e.Code != -32700 || string(m["id"]) != "null" {
		t.Fatalf("answer to a body that is not JSON = %s %s, want -32700 with id null", m["id"], m["error"])
	}
	p.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if m := p.read(); string(m["id"]) != "7" || string(m["result"]) != `"ok"` {
		t.Fatalf("the next request was answered %v", m)
	}
}
