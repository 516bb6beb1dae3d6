package rpc

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/agentd-dev/agentd/providers"
)

// The older completion has its suggestion from the engine (past the engine's last check) and is
// held there while the editor sends a newer request for the same document, until agentd has
// read that request (it asks the editor for the document's text). The older suggestion must
// not be written then: it answers the empty list, and the newer request its own suggestion.
func TestCompletionSupersededAfterTheEnginesCheckAnswersEmpty(t *testing.T) {
	fim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/completions" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"choices":[{"text":"a + b","finish_reason":"stop"}]}`))
	}))
	defer fim.Close()

	// The real editor bridge, which reads the document from the editor; the completions dialect
	// speaks HTTP itself, so the provider the registry makes is never used.
	reg := fakeDialects(func(providers.Config) (providers.Provider, error) { return &streamingProvider{}, nil })
	h := startServer(t, Options{Registry: reg, Logger: zaptest.NewLogger(t)})
	atWindow, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.srv.afterComplete = func() {
		once.Do(func() { close(atWindow); <-release })
	}
	reads := make(chan struct{}, 4)
	h.onCall = func(m *wireMsg) (any, *wireErr) {
		if m.Method != "agent/fs/read_text_file" {
			return nil, &wireErr{Code: -32601, Message: "not here"}
		}
		reads <- struct{}{}
		return map[string]any{"content": "package add\n\nfunc Add(a, b int) int {\n\treturn \n}\n"}, nil
	}
	wantResult(t, h.initialize(t, map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"agent": map[string]any{
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true}},
		"settings": map[string]any{
			"provider":   "local",
			"providers":  map[string]any{"local": map[string]any{"apiType": "openai", "baseUrl": fim.URL + "/v1", "model": "coder"}},
			"completion": map[string]any{"provider": "local", "model": "coder-fim", "endpoint": "completions"},
		},
	}}}), nil)

	uri := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "add.go"))
	params := map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 3, "character": 8}}
	_, older := h.start(MethodInlineCompletion, params)
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	wait(reads, "the older request's read")
	wait(atWindow, "the older suggestion at the window")
	_, newer := h.start(MethodInlineCompletion, params)
	wait(reads, "the newer request's read") // agentd has read, and superseded with, the newer request
	close(release)

	type list struct {
		Items []struct {
			InsertText string `json:"insertText"`
		} `json:"items"`
	}
	var got list
	m := h.wait(older)
	wantResult(t, m, &got)
	if got.Items == nil || len(got.Items) != 0 {
		t.Errorf("superseded request answered %s, want the empty list", m.Result)
	}
	got = list{}
	m = h.wait(newer)
	wantResult(t, m, &got)
	if len(got.Items) != 1 || got.Items[0].InsertText != "a + b" {
		t.Errorf("newer request answered %s, want its suggestion", m.Result)
	}
}

// Completions in a row ask the editor for the provider's key once, not per keystroke; what the
// editor then changes through agentd (agent/providers/set, new settings) is used by the very next
// completion, and a key the server refuses is asked for again.
func TestCompletionKeyIsAskedOnceAndChangesAreSeen(t *testing.T) {
	type seen struct{ server, auth, extra string }
	var mu sync.Mutex
	var got []seen
	serve := func(name string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = append(got, seen{name, r.Header.Get("Authorization"), r.Header.Get("X-Extra")})
			mu.Unlock()
			if r.Header.Get("Authorization") == "Bearer sk-refused" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Write([]byte(`{"choices":[{"text":"a + b","finish_reason":"stop"}]}`))
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	a, b := serve("a"), serve("b")
	reg := fakeDialects(func(providers.Config) (providers.Provider, error) { return &streamingProvider{}, nil })
	h := startServer(t, Options{Registry: reg, Logger: zaptest.NewLogger(t)})
	var smu sync.Mutex
	secretAsks, secret := 0, "sk-first"
	h.onCall = func(m *wireMsg) (any, *wireErr) {
		switch m.Method {
		case "agent/fs/read_text_file":
			return map[string]any{"content": "package add\n\nfunc Add(a, b int) int {\n\treturn \n}\n"}, nil
		case "agent/x/secrets/get":
			smu.Lock()
			defer smu.Unlock()
			secretAsks++
			return map[string]any{"value": secret}, nil
		}
		return nil, &wireErr{Code: -32601, Message: "not here"}
	}
	settings := func(base string) map[string]any {
		return map[string]any{
			"provider":   "local",
			"providers":  map[string]any{"local": map[string]any{"apiType": "openai", "baseUrl": base + "/v1", "model": "coder"}},
			"completion": map[string]any{"provider": "local", "model": "coder-fim", "endpoint": "completions"},
		}
	}
	wantResult(t, h.initialize(t, map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"agent": map[string]any{
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true}, "secrets": true},
		"settings":           settings(a.URL),
	}}}), nil)
	go func() { // the harness queues every reverse request for tests that wait on them
		for {
			select {
			case <-h.requests:
			case <-h.done:
				return
			}
		}
	}()
	uri := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "add.go"))
	n := 0
	complete := func() string {
		t.Helper()
		n++ // a new position each time, so that none is answered from the previous suggestion
		m := h.call(MethodInlineCompletion, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 3, "character": 1 + n%7}})
		var res struct {
			Items []struct {
				InsertText string `json:"insertText"`
			} `json:"items"`
		}
		wantResult(t, m, &res)
		if len(res.Items) == 0 {
			return ""
		}
		return res.Items[0].InsertText
	}
	last := func() seen {
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			return seen{}
		}
		return got[len(got)-1]
	}
	asks := func() int {
		smu.Lock()
		defer smu.Unlock()
		return secretAsks
	}
	for range 4 {
		if s := complete(); s != "a + b" {
			t.Fatalf("completion answered %q", s)
		}
	}
	if asks() != 1 || last() != (seen{"a", "Bearer sk-first", ""}) {
		t.Errorf("4 completions: the editor was asked for the key %d times (want 1); last request %+v", asks(), last())
	}

	// New settings move the provider to another server: the next completion goes there.
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": settings(b.URL)})
	deadline := time.Now().Add(5 * time.Second)
	for last().server != "b" && time.Now().Before(deadline) && n < 50 {
		complete() // the notification and the request race on the server's reader
	}
	if l := last(); l.server != "b" {
		t.Fatalf("after new settings, completions still go to %+v", l)
	}

	// Headers set through agent/providers/set go with the next completion.
	wantResult(t, h.call("agent/providers/set", map[string]any{"providerId": "local", "apiType": "openai", "baseUrl": b.URL + "/v1", "model": "coder",
		"headers": map[string]string{"X-Extra": "on"}}), nil)
	complete()
	if l := last(); l != (seen{"b", "Bearer sk-first", "on"}) {
		t.Errorf("after agent/providers/set, the completion sent %+v, want X-Extra: on to b", l)
	}

	// A refused key is asked for again at the next keystroke.
	smu.Lock()
	secret = "sk-refused"
	smu.Unlock()
	wantResult(t, h.call("agent/providers/set", map[string]any{"providerId": "local", "apiType": "openai", "baseUrl": a.URL + "/v1", "model": "coder"}), nil)
	if s := complete(); s != "" {
		t.Errorf("a refused key answered %q", s)
	}
	if l := last(); l.auth != "Bearer sk-refused" {
		t.Fatalf("after new settings, the completion sent %+v, want the refused key", l)
	}
	smu.Lock()
	secret = "sk-second"
	smu.Unlock()
	before := asks()
	if s := complete(); s != "a + b" || last().auth != "Bearer sk-second" || asks() != before+1 {
		t.Errorf("after a refused key: %q with %+v and %d more asks; want the suggestion with sk-second after 1 ask", s, last(), asks()-before)
	}
}
