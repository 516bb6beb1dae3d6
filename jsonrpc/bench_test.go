package jsonrpc

import (
	"bufio"
	"context"
	"io"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
)

type discardCloser struct{ io.Writer }

func (discardCloser) Close() error { return nil }

type nopReader struct{}

func (nopReader) Read([]byte) (int, error) { return 0, io.EOF }
func (nopReader) Close() error             { return nil }

func benchNotification() *protocol.SessionNotification {
	return &protocol.SessionNotification{SessionID: "sess_4f1c2a9be0d3", Update: protocol.SessionUpdate{
		SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: "msg_01",
		Content: &protocol.ContentBlock{Type: "text", Text: "Here is the next chunk of the model's answer, a few words long."}}}
}

// BenchmarkSessionUpdateNotify is one agent/session/update as the bridge sends it: encode the
// params and write one framed notification.
func BenchmarkSessionUpdateNotify(b *testing.B) {
	c := NewConn(nopReader{}, discardCloser{io.Discard}, Options{})
	defer c.CloseStream()
	n := benchNotification()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Notify(ctx, protocol.MethodSessionUpdate, n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionUpdateNotifyReflect is the same notification through the generic path
// (encoding/json), for comparison.
func BenchmarkSessionUpdateNotifyReflect(b *testing.B) {
	c := NewConn(nopReader{}, discardCloser{io.Discard}, Options{})
	defer c.CloseStream()
	n := benchNotification()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.notify(protocol.MethodSessionUpdate, n); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSessionUpdateFastPathFrame(t *testing.T) {
	pr, pw := io.Pipe()
	c := NewConn(nopReader{}, pw, Options{})
	defer c.CloseStream()
	go func() {
		c.Notify(context.Background(), protocol.MethodSessionUpdate, *benchNotification())
	}()
	body, err := ReadFrame(bufio.NewReader(pr), nil, MaxContentLength)
	if err != nil {
		t.Fatal(err)
	}
	n, err := DecodeRequest(body)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if n == nil || n.IsCall() || n.Method() != protocol.MethodSessionUpdate {
		t.Fatalf("got %#v %s", n, body)
	}
	want := string(protocol.AppendSessionNotification(nil, benchNotification()))
	if string(n.Params()) != want {
		t.Fatalf("params %s, want %s", n.Params(), want)
	}
}
