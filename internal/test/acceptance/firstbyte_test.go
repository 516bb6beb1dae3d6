package acceptance_test

// Issue 19 item 1: a model server that accepts the request and says nothing.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentd-dev/agentd/internal/test/fakemodel"
)

// silentModel accepts every chat request and never answers it; started reports each arrival.
func silentModel(t *testing.T) (url string, requests *atomic.Int32, started chan struct{}) {
	t.Helper()
	requests = &atomic.Int32{}
	started = make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
		requests.Add(1)
		started <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: no handler outlives the test
	return srv.URL + "/v1", requests, started
}

func firstByteSettings(url string, seconds float64) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"provider": "fm",
		"providers": map[string]any{"fm": map[string]any{
			"apiType": "openai", "baseUrl": url, "model": fakemodel.ModelID, "firstByteTimeout": seconds}},
	})
	return b
}

// With providers.fm.firstByteTimeout at 0.2 s, the turn ends with a network error that says what
// happened and what to do, after one retry announced as such: two requests, not four.
func TestSilentModelServerEndsTheTurnAtTheFirstByteLimit(t *testing.T) {
	t.Parallel()
	url, requests, _ := silentModel(t)
	w, sid := startWire(t, firstByteSettings(url, 0.2))
	r := w.response(w.prompt(sid, "hi"))
	if got := stopOf(t, r); got != "end_turn" {
		t.Errorf("stopReason %q, want end_turn with an error", got)
	}
	em, _ := obj(r, "result", "_meta", "agentd/error").(map[string]any)
	msg, _ := em["message"].(string)
	if em["kind"] != "network" || !strings.Contains(msg, "did not start answering within 200 ms") || !strings.Contains(msg, "firstByteTimeout") {
		t.Errorf("agentd/error = %v", em)
	}
	var retries []string
	for _, m := range w.all() {
		if isUpdate(m, "notice") {
			if title, _ := obj(m, "params", "update", "title").(string); strings.HasPrefix(title, "no answer from the model server, retrying") {
				retries = append(retries, title)
			}
		}
	}
	if len(retries) != 1 {
		t.Errorf("retry notices = %q, want one", retries)
	}
	// The retry notice shows the one retry; the server may not have seen a request that a loaded
	// machine took longer than 0.2 s to deliver, but it never sees more than two.
	if n := requests.Load(); n < 1 || n > 2 {
		t.Errorf("the model server got %d requests, want 2 (one retry)", n)
	}
}

// Cancel ends a turn waiting on a silent server as it ends any other.
func TestCancelWhileTheModelServerIsSilent(t *testing.T) {
	t.Parallel()
	url, _, started := silentModel(t)
	w, sid := startWire(t, firstByteSettings(url, 0))
	id := w.prompt(sid, "hi")
	<-started
	w.cancel(sid)
	if got := stopOf(t, w.response(id)); got != "cancelled" {
		t.Errorf("stopReason %q, want cancelled", got)
	}
}
