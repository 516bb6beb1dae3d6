package acceptance_test

// PROTOCOL.md v1.2 "Completions and the inference router": textDocument/inlineCompletion through
// the binary, from the editor's unsaved buffer to a fill-in-the-middle server on loopback.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/protocol"
)

// TestInlineCompletionThroughTheBinary: initialize advertises inlineCompletionProvider when the
// user's settings name a completion model; the request reads the unsaved buffer and the other
// open file, sends prefix and suffix to the server's /v1/completions, and answers the shaped
// suggestion; typing through it needs no second model call; a failing server answers no items.
func TestInlineCompletionThroughTheBinary(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []map[string]any
	fail := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b map[string]any
		json.Unmarshal(raw, &b)
		mu.Lock()
		bodies = append(bodies, b)
		f := fail
		mu.Unlock()
		if r.URL.Path != "/v1/completions" {
			http.NotFound(w, r)
			return
		}
		if f {
			http.Error(w, `{"error":"model not loaded"}`, http.StatusInternalServerError)
			return
		}
		w.Write([]byte(`{"choices":[{"text":"a + b\n}","finish_reason":"stop"}]}`))
	}))
	defer srv.Close()
	settings, _ := json.Marshal(map[string]any{
		"provider":   "local",
		"providers":  map[string]any{"local": map[string]any{"apiType": "openai", "baseUrl": srv.URL + "/v1", "model": "coder"}},
		"completion": map[string]any{"provider": "local", "model": "coder-fim", "endpoint": "completions"},
	})
	e := start(t, fakeeditor.Full(), settings)
	var init struct {
		Capabilities struct {
			InlineCompletionProvider bool `json:"inlineCompletionProvider"`
		} `json:"capabilities"`
	}
	json.Unmarshal(e.init, &init)
	if !init.Capabilities.InlineCompletionProvider {
		t.Fatalf("initialize does not advertise inline completions: %s", e.init)
	}
	path := e.writeFile("add.go", "package add\n") // on disk: not what is completed
	other := e.writeFile("util.go", "package add\n\nconst Two = 2\n")
	e.ed.Open(path, "package add\n\nfunc Add(a, b int) int {\n\treturn \n}\n")
	e.ed.Open(other, "package add\n\nconst Two = 2\n")
	e.ed.SetEditorState(protocol.EditorStateResult{ActiveFile: path, OpenFiles: []string{path, other}})

	type item struct {
		InsertText string `json:"insertText"`
	}
	complete := func(line, char int) []item {
		t.Helper()
		var res struct {
			Items []item `json:"items"`
		}
		err := e.ed.Call(ctxT(t), "textDocument/inlineCompletion", map[string]any{
			"textDocument": map[string]any{"uri": "file://" + path},
			"position":     map[string]any{"line": line, "character": char},
			"context":      map[string]any{"triggerKind": 2},
		}, &res)
		if err != nil {
			t.Fatalf("inlineCompletion: %v", err)
		}
		return res.Items
	}
	items := complete(3, 8) // after "\treturn "
	if len(items) != 1 || items[0].InsertText != "a + b" {
		t.Fatalf("items %+v, want one a + b", items)
	}
	mu.Lock()
	b := bodies[0]
	mu.Unlock()
	if b["model"] != "coder-fim" || b["prompt"] != "package add\n\nfunc Add(a, b int) int {\n\treturn " || b["suffix"] != "\n}\n" {
		t.Fatalf("request body %v", b)
	}
	stateAsks := func() int {
		n := 0
		for _, m := range e.ed.Messages() {
			if strings.Contains(m, `"method":"agent/x/editor_state"`) {
				n++
			}
		}
		return n
	}
	// The completions dialect sends only the prefix and suffix: the other open files are not
	// read (TestInlineCompletionInfillSendsOtherFiles is the dialect that sends them).
	asked := stateAsks()
	if asked != 0 {
		t.Fatalf("the editor's open files were asked for %d times for a dialect that does not send them", asked)
	}
	// Typing "a" is answered from the suggestion, without reading the other open files again.
	e.ed.Open(path, "package add\n\nfunc Add(a, b int) int {\n\treturn a\n}\n")
	if items := complete(3, 9); len(items) != 1 || items[0].InsertText != " + b" {
		t.Fatalf("after typing a: %+v", items)
	}
	if n := stateAsks(); n != asked {
		t.Fatalf("typing through asked the editor's state again (%d times, was %d)", n, asked)
	}
	mu.Lock()
	n := len(bodies)
	fail = true
	mu.Unlock()
	if n != 1 {
		t.Fatalf("%d model requests, want 1 (typing through needs none)", n)
	}
	// A failing server: no items, no notice, no error.
	e.ed.Open(path, "package add\n\nfunc Add(a, b int) int {\n\treturn x\n}\n")
	if items := complete(3, 9); len(items) != 0 {
		t.Fatalf("a failing server gave %+v", items)
	}
	for _, m := range e.ed.Messages() {
		if strings.Contains(m, `"notice"`) && strings.Contains(m, "model not loaded") {
			t.Fatalf("a failed completion became a notice: %s", m)
		}
	}
}

// llama.cpp's /infill gets the other open files, as the editor has them (unsaved text), in
// input_extra; the document itself is not among them.
func TestInlineCompletionInfillSendsOtherFiles(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var body map[string]any
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		json.Unmarshal(raw, &body)
		path = r.URL.Path
		mu.Unlock()
		w.Write([]byte(`{"content":"a + Two"}`))
	}))
	defer srv.Close()
	settings, _ := json.Marshal(map[string]any{
		"providers":  map[string]any{"local": map[string]any{"apiType": "openai", "baseUrl": srv.URL + "/v1", "model": "coder"}},
		"completion": map[string]any{"provider": "local", "model": "coder-fim", "endpoint": "infill"},
	})
	e := start(t, fakeeditor.Full(), settings)
	doc := e.writeFile("add.go", "package add\n")
	other := e.writeFile("util.go", "package add\n")
	e.ed.Open(doc, "package add\n\nfunc Add(a int) int {\n\treturn \n}\n")
	e.ed.Open(other, "package add\n\nconst Two = 2 // unsaved\n")
	e.ed.SetEditorState(protocol.EditorStateResult{ActiveFile: doc, OpenFiles: []string{doc, other}})
	var res struct {
		Items []struct {
			InsertText string `json:"insertText"`
		} `json:"items"`
	}
	if err := e.ed.Call(ctxT(t), "textDocument/inlineCompletion", map[string]any{
		"textDocument": map[string]any{"uri": "file://" + doc},
		"position":     map[string]any{"line": 3, "character": 8},
	}, &res); err != nil || len(res.Items) != 1 || res.Items[0].InsertText != "a + Two" {
		t.Fatalf("inlineCompletion: %+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	extra, _ := json.Marshal(body["input_extra"])
	if path != "/infill" || !strings.Contains(string(extra), "const Two = 2 // unsaved") || strings.Contains(string(extra), "func Add") {
		t.Fatalf("POST %s input_extra %s", path, extra)
	}
}

// A project file cannot turn completions on: where the text around the cursor goes is the
// user's to say.
func TestProjectCannotConfigureCompletions(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	if err := os.MkdirAll(filepath.Join(root, ".agentd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agentd", "config.json"), []byte(`{"completion": {"provider": "anthropic", "model": "claude-haiku-4-5"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := startIn(t, fakeeditor.Full(), nil, "", root)
	if strings.Contains(string(e.init), "inlineCompletionProvider") {
		t.Fatalf("a project file turned completions on: %s", e.init)
	}
}

// A completion setting that names no defined provider must not keep agentd from starting: the
// daemon initializes, says what is wrong once in a window/showMessage warning naming the key,
// does not advertise inline completions, answers a completion request with no items, and serves
// sessions as before.
func TestBadCompletionProviderIsANoticeNotAFailedStart(t *testing.T) {
	t.Parallel()
	settings, _ := json.Marshal(map[string]any{
		"completion": map[string]any{"provider": "nosuch", "model": "coder-fim"},
	})
	e := start(t, fakeeditor.Full(), settings)
	if strings.Contains(string(e.init), "inlineCompletionProvider") {
		t.Fatalf("inline completions advertised with a provider that does not exist: %s", e.init)
	}
	warned := 0
	for _, m := range e.ed.Messages() {
		if strings.Contains(m, `"window/showMessage"`) {
			if !strings.Contains(m, "completion.provider") || !strings.Contains(m, "nosuch") || !strings.Contains(m, `"type":2`) {
				t.Errorf("the notice does not name the key and value as a warning: %s", m)
			}
			warned++
		}
	}
	if warned != 1 {
		t.Fatalf("%d window/showMessage notices, want 1:\n%s", warned, e.ed.Log())
	}
	path := e.writeFile("a.go", "package a\n")
	e.ed.Open(path, "package a\n")
	var res struct {
		Items []any `json:"items"`
	}
	if err := e.ed.Call(ctxT(t), "textDocument/inlineCompletion", map[string]any{
		"textDocument": map[string]any{"uri": "file://" + path},
		"position":     map[string]any{"line": 1, "character": 0},
	}, &res); err != nil || len(res.Items) != 0 {
		t.Fatalf("inlineCompletion: %+v %v, want no items and no error", res, err)
	}
	e.newSession() // the agent works as before
	// The same problem sent again with the editor's settings is not told twice.
	if err := e.ed.Notify(ctxT(t), "workspace/didChangeConfiguration", map[string]any{"settings": json.RawMessage(settings)}); err != nil {
		t.Fatal(err)
	}
	e.newSession()
	n := 0
	for _, m := range e.ed.Messages() {
		if strings.Contains(m, `"window/showMessage"`) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d notices after the same settings came again, want 1", n)
	}
}

// textDocument/didClose drops the closed document's suggestion: the same text reopened goes to
// the model again instead of being answered from what agentd kept.
func TestDidCloseForgetsTheDocument(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		w.Write([]byte(`{"choices":[{"text":"return a + b"}]}`))
	}))
	defer srv.Close()
	settings, _ := json.Marshal(map[string]any{
		"providers":  map[string]any{"local": map[string]any{"apiType": "openai", "baseUrl": srv.URL + "/v1", "model": "coder"}},
		"completion": map[string]any{"provider": "local", "model": "coder-fim", "endpoint": "completions"},
	})
	e := start(t, fakeeditor.Full(), settings)
	path := e.writeFile("add.go", "package add\n")
	uri := "file://" + path
	complete := func(text string) string {
		t.Helper()
		e.ed.Open(path, text+"\n}\n")
		var res struct {
			Items []struct {
				InsertText string `json:"insertText"`
			} `json:"items"`
		}
		if err := e.ed.Call(ctxT(t), "textDocument/inlineCompletion", map[string]any{
			"textDocument": map[string]any{"uri": uri},
			"position":     map[string]any{"line": 2, "character": len(text) - strings.LastIndexByte(text, '\n') - 1},
		}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Items) != 1 {
			return ""
		}
		return res.Items[0].InsertText
	}
	modelCalls := func() int { mu.Lock(); defer mu.Unlock(); return calls }
	if got := complete("package add\n\n\t"); got != "return a + b" {
		t.Fatalf("first suggestion %q", got)
	}
	if got := complete("package add\n\n\tret"); got != "urn a + b" || modelCalls() != 1 {
		t.Fatalf("typing through: %q after %d model calls", got, modelCalls())
	}
	if err := e.ed.Notify(ctxT(t), "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}}); err != nil {
		t.Fatal(err)
	}
	// A malformed didClose is ignored, and the daemon stays up.
	if err := e.ed.Notify(ctxT(t), "textDocument/didClose", map[string]any{"textDocument": "nope"}); err != nil {
		t.Fatal(err)
	}
	if got := complete("package add\n\n\tretu"); got != "return a + b" || modelCalls() != 2 {
		t.Fatalf("after didClose: %q after %d model calls, want the model asked again", got, modelCalls())
	}
}
