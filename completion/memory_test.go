package completion

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
)

// held is how many documents the engine keeps anything for.
func (e *Engine) held() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.last) + len(e.inflight) + len(e.superseded)
}

func suggestingServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"choices":[{"text":"return a + b"}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A closed document leaves nothing behind: a day of opening and closing files must not make the
// engine hold their text.
func TestClosedDocumentsAreForgotten(t *testing.T) {
	srv := suggestingServer(t)
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions"}
	e := engine(set, providers.Config{ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1"}, nil)
	ctx := context.Background()
	for i := range 200 {
		key := fmt.Sprintf("file:///day/%d.go", i)
		if got, _ := e.Complete(ctx, Request{Key: key, Prefix: "func f() int {\n\t", Suffix: "\n}\n"}); got != "return a + b" {
			t.Fatalf("document %d: %q", i, got)
		}
		e.Supersede(key) // a request that came and went: its record must go too
		e.Forget(key)
	}
	if n := e.held(); n != 0 {
		t.Fatalf("the engine still holds %d closed documents", n)
	}
}

// A client that never says a document was closed (an old client, a crash) still cannot make the
// engine grow: it keeps the last suggestion of at most maxDocuments documents, and its heap does
// not grow with the number of files opened.
func TestOpenDocumentsAreBounded(t *testing.T) {
	srv := suggestingServer(t)
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions", ContextChars: 1 << 20}
	e := engine(set, providers.Config{ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1"}, nil)
	ctx := context.Background()
	big := strings.Repeat("// filler line of a large file\n", 2000) // 62 KB a document
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	open := func(from, to int) {
		for i := from; i < to; i++ {
			key := fmt.Sprintf("file:///day/%d.go", i)
			// Each document's text is its own allocation, as the editor's reads are.
			prefix := strings.Clone(big) + "func f() int {\n\t"
			if got, _ := e.Complete(ctx, Request{Key: key, Prefix: prefix, Suffix: "\n}\n"}); got != "return a + b" {
				t.Fatalf("document %d: %q", i, got)
			}
		}
	}
	open(0, maxDocuments)
	after := heap()
	open(maxDocuments, 10*maxDocuments)
	if n := e.held(); n > maxDocuments {
		t.Fatalf("the engine holds %d documents, want at most %d", n, maxDocuments)
	}
	// 9 × maxDocuments more documents of 62 KB would be 36 MB held; allow a tenth of one batch.
	if grown := int64(heap()) - int64(after); grown > int64(maxDocuments*len(big)/10) {
		t.Fatalf("the heap grew by %d bytes over %d more documents", grown, 9*maxDocuments)
	}
	// The newest documents are the ones kept: typing through the last one needs no model call.
	calls := e.Stats().ModelCalls
	key := fmt.Sprintf("file:///day/%d.go", 10*maxDocuments-1)
	if got, _ := e.Complete(ctx, Request{Key: key, Prefix: big + "func f() int {\n\tret", Suffix: "\n}\n"}); got != "urn a + b" {
		t.Fatalf("typing through the newest document: %q", got)
	}
	if e.Stats().ModelCalls != calls {
		t.Fatal("typing through the newest document called the model")
	}
}

// Typing through a suggestion works in a file larger than the context budget: the prefix sent
// to the model is cut, the one the editor sends next is not.
func TestTypingThroughInALargeFile(t *testing.T) {
	srv := suggestingServer(t)
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions", ContextChars: 1000}
	e := engine(set, providers.Config{ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1"}, nil)
	ctx := context.Background()
	prefix := strings.Repeat("x := 1\n", 1000) + "func f() int {\n\t"
	suffix := "\n}\n" + strings.Repeat("y := 2\n", 1000)
	if got, _ := e.Complete(ctx, Request{Key: "doc", Prefix: prefix, Suffix: suffix}); got != "return a + b" {
		t.Fatalf("first: %q", got)
	}
	if got, _ := e.Complete(ctx, Request{Key: "doc", Prefix: prefix + "re", Suffix: suffix}); got != "turn a + b" {
		t.Fatalf("typing through: %q", got)
	}
	if st := e.Stats(); st.ModelCalls != 1 {
		t.Fatalf("%d model calls, want 1", st.ModelCalls)
	}
}
