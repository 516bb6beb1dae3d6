package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// The exchange agentd makes, over stdio: handshake, paged listings, a call, a prompt.
func TestExchange(t *testing.T) {
	s, p := connectPipe(t, Options{Info: Info{Name: "agentd", Version: "1"}})
	if caps := s.InitializeResult().Capabilities; caps == nil || caps.Tools == nil || !caps.Tools.ListChanged || caps.Prompts == nil {
		t.Fatalf("capabilities = %+v", caps)
	}
	tools := async(func() ([]Tool, error) { return s.Tools(context.Background(), 1000) })
	w := p.expect("tools/list")
	if string(w.Params) != "{}" {
		t.Errorf("first page params = %s", w.Params)
	}
	p.answer(w, `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c2"}`)
	w = p.expect("tools/list")
	if string(w.Params) != `{"cursor":"c2"}` {
		t.Errorf("second page params = %s", w.Params)
	}
	p.answer(w, `{"tools":[{"name":"b","title":"B","description":"bee"}]}`)
	tl, err := tools()
	if err != nil || len(tl) != 2 || tl[0].Name != "a" || string(tl[0].InputSchema) != `{"type":"object"}` || tl[1].Description != "bee" {
		t.Fatalf("tools = %+v, %v", tl, err)
	}

	call := async(func() (*CallToolResult, error) { return s.CallTool(context.Background(), "a", nil) })
	w = p.expect("tools/call")
	if string(w.Params) != `{"arguments":{},"name":"a"}` {
		t.Errorf("call params = %s", w.Params)
	}
	p.answer(w, `{"content":[{"type":"text","text":"hi"},{"type":"image","mimeType":"image/png","data":"iVBO"},
		{"type":"audio","mimeType":"audio/wav","data":"UklG"},{"type":"resource_link","uri":"file:///a","name":"a"},
		{"type":"resource","resource":{"uri":"file:///b","text":"body"}},{"type":"resource","resource":{"uri":"file:///c","blob":"AAE="}}],
		"structuredContent":{"n":1},"isError":true}`)
	r, err := call()
	if err != nil {
		t.Fatal(err)
	}
	c := r.Content
	if len(c) != 6 || c[0].Text != "hi" || string(c[1].Data) != "\x89PN" || c[2].Type != KindAudio || c[3].URI != "file:///a" ||
		c[4].Resource.Text != "body" || string(c[5].Resource.Blob) != "\x00\x01" || !r.IsError || r.StructuredContent.(map[string]any)["n"] != 1.0 {
		t.Errorf("result = %+v", r)
	}

	prompt := async(func() (*GetPromptResult, error) {
		return s.GetPrompt(context.Background(), "p", map[string]string{"x": "1"})
	})
	w = p.expect("prompts/get")
	p.answer(w, `{"messages":[{"role":"user","content":{"type":"text","text":"rendered"}}]}`)
	if g, err := prompt(); err != nil || g.Messages[0].Content.Text != "rendered" {
		t.Errorf("prompt = %+v, %v", g, err)
	}

	// A JSON-RPC error is the call's error, with the server's message.
	call = async(func() (*CallToolResult, error) { return s.CallTool(context.Background(), "a", nil) })
	w = p.expect("tools/call")
	p.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown tool"}}`, w.ID)
	var rpc *Error
	if _, err := call(); !errors.As(err, &rpc) || rpc.Code != -32602 || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("error = %v", err)
	}
}

// Pagination stops at max items, and at maxPages pages of a server that never stops handing out
// cursors.
func TestListingIsBounded(t *testing.T) {
	s, p := connectPipe(t, Options{})
	tools := async(func() ([]Tool, error) { return s.Tools(context.Background(), 3) })
	p.answer(p.expect("tools/list"), `{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"x"}`)
	p.answer(p.expect("tools/list"), `{"tools":[{"name":"c"},{"name":"d"}],"nextCursor":"x"}`)
	if tl, err := tools(); err != nil || len(tl) != 3 {
		t.Fatalf("tools = %+v, %v", tl, err)
	}
	prompts := async(func() ([]Prompt, error) { return s.Prompts(context.Background(), 1000) })
	for range maxPages {
		p.answer(p.expect("prompts/list"), `{"prompts":[],"nextCursor":"again"}`)
	}
	if pl, err := prompts(); err != nil || len(pl) != 0 {
		t.Fatalf("prompts = %+v, %v", pl, err)
	}
}

// list_changed notifications reach their handlers.
func TestListChanged(t *testing.T) {
	tools, prompts := make(chan bool, 1), make(chan bool, 1)
	_, p := connectPipe(t, Options{ToolsChanged: func() { tools <- true }, PromptsChanged: func() { prompts <- true }})
	p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{}}`)
	for _, ch := range []chan bool{tools, prompts} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("a list_changed was not reported")
		}
	}
}

// The server's requests are answered as the SDK's client answers them.
func TestServerRequestsAnswered(t *testing.T) {
	_, p := connectPipe(t, Options{})
	for _, c := range []struct{ req, want string }{
		{`{"jsonrpc":"2.0","id":"p1","method":"ping"}`, `{"jsonrpc":"2.0","id":"p1","result":{}}`},
		{`{"jsonrpc":"2.0","id":7,"method":"roots/list","params":{}}`, `{"jsonrpc":"2.0","id":7,"result":{"roots":[]}}`},
		{`{"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{}}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"method not found: \"sampling/createMessage\""}}`},
	} {
		p.send("%s", c.req)
		line, err := p.in.ReadBytes('\n')
		if err != nil || strings.TrimSpace(string(line)) != c.want {
			t.Errorf("answer to %s = %s (%v), want %s", c.req, line, err, c.want)
		}
	}
}

// A cancelled call returns at once, the server is sent notifications/cancelled with the call's
// id, and the late answer is dropped without harm.
func TestCancelSendsNotificationsCancelled(t *testing.T) {
	l := &logs{}
	s, p := connectPipe(t, Options{Log: l.log})
	ctx, cancel := context.WithCancel(context.Background())
	call := async(func() (*CallToolResult, error) { return s.CallTool(ctx, "slow", nil) })
	w := p.expect("tools/call")
	cancel()
	if _, err := call(); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	n := p.expect("notifications/cancelled")
	var params struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	if err := json.Unmarshal(n.Params, &params); err != nil || string(params.RequestID) != string(w.ID) || params.Reason != "context canceled" {
		t.Errorf("notifications/cancelled params = %s, call id %s", n.Params, w.ID)
	}
	p.answer(w, `{"content":[{"type":"text","text":"too late"}]}`)
	call = async(func() (*CallToolResult, error) { return s.CallTool(context.Background(), "next", nil) })
	p.answer(p.expect("tools/call"), `{"content":[{"type":"text","text":"next"}]}`)
	if r, err := call(); err != nil || r.Content[0].Text != "next" {
		t.Errorf("the next call = %+v, %v", r, err)
	}
	if !l.has("dropped an answer to no pending call (id " + string(w.ID) + ")") {
		t.Errorf("the late answer was not logged as dropped: %q", l.all)
	}
}

// What a broken or hostile server sends on stdio: each case ends as a clear error or a logged
// drop, and a call after the harmless ones still works.
func TestHostileStdio(t *testing.T) {
	for _, c := range []struct {
		name string
		send func(p *peer, w wire) // after the client's tools/call w
		err  string                // the call's error; "" means it must then succeed
		log  string
		dead bool // the session ends
	}{
		{name: "not JSON", send: func(p *peer, w wire) {
			p.send("this is a log line on stdout")
			p.send(`{"jsonrpc":"2.0","id":`) // a truncated message
			p.answer(w, `{"content":[]}`)
		}, log: "not a JSON-RPC object"},
		{name: "an id never sent", send: func(p *peer, w wire) {
			p.send(`{"jsonrpc":"2.0","id":999,"result":{}}`)
			p.send(`{"jsonrpc":"2.0","id":"str","result":{}}`)
			p.send(`{"jsonrpc":"2.0","id":{"an":"object"},"result":{}}`)
			p.answer(w, `{"content":[]}`)
		}, log: "(id 999)"},
		{name: "neither request nor answer", send: func(p *peer, w wire) {
			p.send(`{"jsonrpc":"2.0"}`)
			p.send(`[1,2,3]`)
			p.answer(w, `{"content":[]}`)
		}, log: "neither a request nor an answer"},
		{name: "an error of the wrong shape", send: func(p *peer, w wire) {
			p.send(`{"jsonrpc":"2.0","id":%s,"error":"boom"}`, w.ID)
		}, err: `malformed error "\"boom\""`},
		{name: "a result of the wrong shape", send: func(p *peer, w wire) {
			p.answer(w, `{"content":"not a list"}`)
		}, err: "does not decode"},
		{name: "a line over the limit", send: func(p *peer, w wire) {
			p.send(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, w.ID, strings.Repeat("x", 2048))
		}, err: "exceeded the size limit", dead: true},
		{name: "the server's output ends", send: func(p *peer, w wire) {
			p.out.Close()
		}, err: "the connection ended: EOF", dead: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &logs{}
			s, p := connectPipe(t, Options{Log: l.log, MaxMessage: 1024})
			call := async(func() (*CallToolResult, error) { return s.CallTool(context.Background(), "t", nil) })
			w := p.expect("tools/call")
			c.send(p, w)
			_, err := call()
			switch {
			case c.err == "" && err != nil:
				t.Errorf("the call failed: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("the call's error = %v, want one containing %q", err, c.err)
			}
			if c.log != "" && !l.has(c.log) {
				t.Errorf("log = %q, want an entry containing %q", l.all, c.log)
			}
			if c.dead {
				if err := s.Wait(); err == nil {
					t.Error("the session did not end")
				}
				return
			}
			call = async(func() (*CallToolResult, error) { return s.CallTool(context.Background(), "again", nil) })
			p.answer(p.expect("tools/call"), `{"content":[{"type":"text","text":"ok"}]}`)
			if r, err := call(); err != nil || r.Content[0].Text != "ok" {
				t.Errorf("the call after = %+v, %v", r, err)
			}
		})
	}
}

// The default limit is the SDK's 16 MiB: a line just under it is read, one over it ends the
// session with a clear error.
func TestSixteenMiBLine(t *testing.T) {
	s, p := connectPipe(t, Options{})
	big := strings.Repeat("x", MaxMessage-100)
	call := async(func() (*CallToolResult, error) { return s.CallTool(context.Background(), "t", nil) })
	go p.answer(p.expect("tools/call"), `{"content":[{"type":"text","text":"`+big+`"}]}`)
	if r, err := call(); err != nil || len(r.Content[0].Text) != len(big) {
		t.Fatalf("a %d-byte line: %v", len(big), err)
	}
	call = async(func() (*CallToolResult, error) { return s.CallTool(context.Background(), "t", nil) })
	go p.answer(p.expect("tools/call"), `{"content":[{"type":"text","text":"`+big+strings.Repeat("y", 200)+`"}]}`)
	if _, err := call(); err == nil || !strings.Contains(err.Error(), "exceeded the size limit (16 MiB)") {
		t.Fatalf("a line over 16 MiB: %v", err)
	}
}

// A flood of requests from the server is answered one by one, with backpressure (the client
// reads no faster than the server takes its answers), and the call made meanwhile is answered.
func TestRequestFlood(t *testing.T) {
	s, p := connectPipe(t, Options{})
	call := async(func() (*CallToolResult, error) { return s.CallTool(context.Background(), "t", nil) })
	w := p.expect("tools/call")
	const n = 20000
	answered := make(chan int, 1)
	go func() {
		got := 0
		for got < n {
			if p.recv().Result == nil {
				break
			}
			got++
		}
		answered <- got
	}()
	for i := range n {
		p.send(`{"jsonrpc":"2.0","id":"f%d","method":"ping"}`, i)
	}
	p.answer(w, `{"content":[{"type":"text","text":"done"}]}`)
	if got := <-answered; got != n {
		t.Errorf("%d pings answered, want %d", got, n)
	}
	if r, err := call(); err != nil || r.Content[0].Text != "done" {
		t.Errorf("the call = %+v, %v", r, err)
	}
}

// A server that answers initialize with a version this client does not speak is refused; one
// without initialize (the 2026-07-28 revision only) is named as such.
func TestVersionRefused(t *testing.T) {
	for _, c := range []struct{ answer, want string }{
		{`"result":{"protocolVersion":"2099-01-01","capabilities":{}}`, `protocol version "2099-01-01"`},
		{`"error":{"code":-32601,"message":"method not found"}`, "2026-07-28 revision"},
	} {
		c2s, c2sw := io.Pipe()
		s2c, s2cw := io.Pipe()
		p := &peer{t: t, in: bufio.NewReader(c2s), out: s2cw}
		conn := async(func() (*Session, error) {
			return Connect(context.Background(), pipeTransport{r: s2c, w: c2sw}, Options{})
		})
		w := p.expect("initialize")
		p.send(`{"jsonrpc":"2.0","id":%s,%s}`, w.ID, c.answer)
		go io.Copy(io.Discard, c2s)
		if _, err := conn(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Connect = %v, want an error containing %q", err, c.want)
		}
		s2cw.Close()
	}
}
