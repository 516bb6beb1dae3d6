package providertest

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/providers/httpsse"
)

// HangUp is the server side of the tests that cancel a stream or break out of it: its handler
// sends a first piece of an SSE body, then holds the response open until the client hangs up,
// and Wait fails the test unless that happens.
type HangUp struct {
	once sync.Once
	gone chan struct{}
}

// NewHangUp returns a HangUp whose client has not hung up yet.
func NewHangUp() *HangUp { return &HangUp{gone: make(chan struct{})} }

// Handler answers a 200 text/event-stream with first, flushed, then waits for the request's
// context to end (the client closed the connection).
func (h *HangUp) Handler(first string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client must hang up
		h.once.Do(func() { close(h.gone) })
	}
}

// Wait fails t unless the client hung up within 10 s.
func (h *HangUp) Wait(t testing.TB) {
	t.Helper()
	select {
	case <-h.gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the client hang up")
	}
}

// doerFunc adapts a function to httpsse.Doer.
type doerFunc func(*http.Request) (*http.Response, error)

// Do calls f.
func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// Offline is a transport that sends nothing: each request's URL is appended to *urls and the
// request fails as a network error, once (no retries). Tests of default base URLs use it, so the
// real host is never dialled.
func Offline(urls *[]string) *httpsse.Transport {
	tr := Transport(&Sleeps{})
	tr.Doer = doerFunc(func(r *http.Request) (*http.Response, error) {
		*urls = append(*urls, r.URL.String())
		return nil, errors.New("offline")
	})
	tr.Retry.MaxAttempts = 1
	return tr
}
