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
