package jsonrpc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
)

// answerCounter counts the answers written and signals when want have arrived.
type answerCounter struct {
	n, want atomic.Int64
	done    chan struct{}
}

func (a *answerCounter) Write(p []byte) (int, error) {
	if a.n.Add(int64(bytes.Count(p, []byte(`"result"`)))) >= a.want.Load() {
		select {
		case a.done <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}
func (a *answerCounter) Close() error { return nil }

// benchServe feeds b.N framed requests like agent/session/prompt's (a sessionId and a short
// text) to a Conn and waits for their b.N answers: reading, decoding, dispatch and the answer's
// encoding and queueing, per request.
func benchServe(b *testing.B, handler Handler) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"agent/session/prompt","params":{"sessionId":"sess_4f1c2a9be0d3","prompt":[{"type":"text","text":"Explain what this function does and whether it can fail."}]}}`
	out := &answerCounter{done: make(chan struct{}, 1)}
	out.want.Store(int64(b.N))
	// The input stays open after the requests: at its end, answers would no longer be written.
	r, w := io.Pipe()
	frame := fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(body), body)
	go func() {
		for range b.N {
			w.Write(frame)
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	c := NewConn(r, out, Options{})
	c.Go(context.Background(), handler)
	<-out.done
	b.StopTimer()
	w.Close()
	c.CloseStream()
}

// BenchmarkServeInline answers each request on the reading goroutine (initialize, shutdown).
func BenchmarkServeInline(b *testing.B) {
	benchServe(b, func(ctx context.Context, req *Request) (any, error) { return "ok", nil })
}

// BenchmarkServeConcurrent finishes each request on a goroutine of its own (every agent/*
// method).
func BenchmarkServeConcurrent(b *testing.B) {
	benchServe(b, func(ctx context.Context, req *Request) (any, error) {
		return Later(func() (any, error) { return "ok", nil }), nil
	})
}
