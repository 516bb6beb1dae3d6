package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"
)

const emptyItems = `{"items":[]}`

// supersedeServer serves "complete" requests whose params name a document: each one, as it is
// read, supersedes the previous request of its document, and answers {"items":[<its id>]} from
// a goroutine of its own, or the error its params ask for. hold, when set, runs before each
// answer is queued (the window between a handler's last check and the writer).
func supersedeServer(t *testing.T, read chan<- ID, hold func(req *Request)) (*Conn, *peer) {
	t.Helper()
	a, b := net.Pipe()
	c := NewConn(a, a, Options{})
	c.beforeAnswer = hold
	c.Go(context.Background(), func(_ context.Context, req *Request) (any, error) {
		var p struct {
			Doc  string `json:"doc"`
			Fail bool   `json:"fail"`
		}
		json.Unmarshal(req.Params(), &p)
		c.Supersede(p.Doc, req.ID(), json.RawMessage(emptyItems))
		read <- req.ID()
		return Later(func() (any, error) {
			if p.Fail {
				return nil, Errorf(InternalError, "failed")
			}
			return map[string]any{"items": []string{string(req.ID().appendTo(nil))}}, nil
		}), nil
	})
	t.Cleanup(func() { b.Close(); c.Close() })
	return c, &peer{t: t, r: bufio.NewReader(b), w: b}
}

func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// The older request's answer is encoded and held at the window before it is queued; the newer
// request for the same document is read then. The older answer must not go out as its own
// result: it answers the empty list, and the newer request answers normally.
func TestSupersededAnswerHeldAtTheWindowIsNotWritten(t *testing.T) {
	read := make(chan ID, 4)
	atWindow, release := make(chan struct{}), make(chan struct{})
	c, p := supersedeServer(t, read, func(req *Request) {
		if n, _ := req.ID().Number(); n == 1 {
			close(atWindow)
			<-release
		}
	})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"complete","params":{"doc":"a"}}`)
	within(t, read, "request 1 read")
	within(t, atWindow, "answer 1 at the window")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"complete","params":{"doc":"a"}}`)
	within(t, read, "request 2 read") // superseded 1 on the reading goroutine
	close(release)

	answers := map[string]string{}
	for len(answers) < 2 {
		m := p.read()
		if _, ok := m["error"]; ok {
			t.Fatalf("error answer %s", m["error"])
		}
		answers[string(m["id"])] = string(m["result"])
	}
	if got := answers["1"]; got != emptyItems {
		t.Errorf("superseded request 1 answered %s, want %s", got, emptyItems)
	}
	if got := answers["2"]; got != `{"items":["2"]}` {
		t.Errorf("request 2 answered %s, want its own result", got)
	}
	assertNoGuards(t, c)
}

// What Supersede must not do: touch an answer queued before the newer request was read, an
// answer for another document, or an error answer; nor keep anything once every answer is out.
func TestSupersedeLeavesOtherAnswersAlone(t *testing.T) {
	read := make(chan ID, 8)
	c, p := supersedeServer(t, read, nil)

	// Answered before the next request of its document is read: its own result.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"complete","params":{"doc":"a"}}`)
	if m := p.read(); string(m["result"]) != `{"items":["1"]}` {
		t.Fatalf("request 1 answered %s %s", m["result"], m["error"])
	}
	within(t, read, "request 1 read")

	// Another document's request, and an error answer superseded: neither becomes the empty list.
	atWindow, release := make(chan struct{}), make(chan struct{})
	c2, p2 := supersedeServer(t, read, func(req *Request) {
		if n, _ := req.ID().Number(); n == 3 {
			close(atWindow)
			<-release
		}
	})
	p2.send(`{"jsonrpc":"2.0","id":3,"method":"complete","params":{"doc":"a","fail":true}}`)
	within(t, read, "request 3 read")
	within(t, atWindow, "answer 3 at the window")
	p2.send(`{"jsonrpc":"2.0","id":4,"method":"complete","params":{"doc":"b"}}`)
	within(t, read, "request 4 read")
	if m := p2.read(); string(m["id"]) != "4" || string(m["result"]) != `{"items":["4"]}` {
		t.Fatalf("request 4 (another document) answered %s", m["result"])
	}
	p2.send(`{"jsonrpc":"2.0","id":5,"method":"complete","params":{"doc":"a"}}`)
	within(t, read, "request 5 read")
	close(release)
	answers := map[string]map[string]json.RawMessage{}
	for len(answers) < 2 {
		m := p2.read()
		answers[string(m["id"])] = m
	}
	if m := answers["3"]; m["error"] == nil || m["result"] != nil {
		t.Errorf("superseded request 3 failed, but answered %s %s; want its error", m["result"], m["error"])
	}
	if got := string(answers["5"]["result"]); got != `{"items":["5"]}` {
		t.Errorf("request 5 answered %s", got)
	}
	assertNoGuards(t, c)
	assertNoGuards(t, c2)
}

func assertNoGuards(t *testing.T, c *Conn) {
	t.Helper()
	c.stream.mu.Lock()
	defer c.stream.mu.Unlock()
	if len(c.stream.guards) != 0 || len(c.stream.newest) != 0 {
		t.Errorf("after every answer, %d guards and %d newest remain", len(c.stream.guards), len(c.stream.newest))
	}
}
