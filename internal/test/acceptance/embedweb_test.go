package acceptance_test

// PROTOCOL.md "Local models and the web": semantic_search over the project with the provider's
// embeddings, and web_fetch refusing this machine's addresses.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
)

// TestSemanticSearchThroughTheBinary: with an embeddingModel the daemon indexes the project in
// the background through the fake server's /v1/embeddings (which answers in reverse order), says
// when the index is ready, and the model's semantic_search finds the file about its query, never
// a gitignored one.
func TestSemanticSearchThroughTheBinary(t *testing.T) {
	t.Parallel()
	fm, base := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_s", Name: "semantic_search", Arguments: json.RawMessage(`{"query":"where is the password verified against the stored hash","max_results":2}`)}}},
		{Text: "It is in auth/login.go."},
	}})
	settings, _ := json.Marshal(map[string]any{
		"provider":  "fm",
		"providers": map[string]any{"fm": map[string]any{"apiType": "openai", "baseUrl": base, "model": fakemodel.ModelID, "embeddingModel": "fake-embed"}},
	})
	root := realDir(t)
	e := startIn(t, fakeeditor.Full(), settings, "", root)
	e.writeFile(".gitignore", "secret/\n")
	e.writeFile("auth/login.go", "package auth\n\n// Login verifies the password against the stored hash.\nfunc Login() {}\n")
	e.writeFile("db/migrate.go", "package db\n\n// Migrate upgrades the database tables.\nfunc Migrate() {}\n")
	e.writeFile("secret/notes.txt", "password verified against the stored hash\n")
	sid := e.newSession()
	e.ed.Wait("the semantic index is ready", func() bool {
		for _, n := range kinds(e.rawUpdates(sid), "notice") {
			if n["title"] == "Semantic index ready" {
				return true
			}
		}
		return false
	})
	e.prompt(sid, "where is the password checked?")
	reqs := fm.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d chat requests", len(reqs))
	}
	if !strings.Contains(string(reqs[0]), `"semantic_search"`) {
		t.Fatal("semantic_search was not offered")
	}
	result := toolMessage(t, reqs[1], "call_s")
	if !strings.HasPrefix(result, "auth/login.go:1-4") || strings.Contains(result, "secret/") {
		t.Fatalf("semantic_search result:\n%s", result)
	}
	if fm.EmbeddedTexts() < 4 { // three files and the query
		t.Fatalf("%d texts embedded", fm.EmbeddedTexts())
	}
}

// toolMessage is the content of the tool message answering call id in a chat request body.
func toolMessage(t *testing.T, body []byte, id string) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	for _, m := range req.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			var s string
			if json.Unmarshal(m.Content, &s) == nil {
				return s
			}
			var parts []struct {
				Text string `json:"text"`
			}
			json.Unmarshal(m.Content, &parts)
			var b strings.Builder
			for _, p := range parts {
				b.WriteString(p.Text)
			}
			return b.String()
		}
	}
	t.Fatalf("no tool message for %s in %s", id, body)
	return ""
}

// TestWebFetchRefusesThisMachine: with the web turned on, web_fetch of 127.0.0.1, localhost and
// ::1 (a listener waits on each, counting) fails for the model and no request reaches them; with
// the web off (the default) web_fetch is not offered at all.
func TestWebFetchRefusesThisMachine(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); fmt.Fprint(w, "internal") })
	v4 := httptest.NewServer(h)
	defer v4.Close()
	u, _ := url.Parse(v4.URL)
	port := u.Port()
	if ln, err := net.Listen("tcp6", "[::1]:"+port); err == nil {
		s6 := &http.Server{Handler: h}
		go s6.Serve(ln)
		defer s6.Close()
	}
	targets := []string{"http://127.0.0.1:" + port + "/admin", "http://localhost:" + port + "/admin", "http://[::1]:" + port + "/admin"}
	var calls []fakemodel.ToolCall
	for i, target := range targets {
		calls = append(calls, fakemodel.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: "web_fetch", Arguments: json.RawMessage(fmt.Sprintf(`{"url":%q}`, target))})
	}
	fm, base := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{ToolCalls: calls}, {Text: "could not fetch"}}})
	e := start(t, fakeeditor.Full(), openaiSettings(base, map[string]any{"web": map[string]any{"enabled": true}}))
	sid := e.newSession()
	e.setMode(sid, "auto")
	e.prompt(sid, "read the admin page")
	reqs := fm.Requests()
	if len(reqs) < 2 || !strings.Contains(string(reqs[0]), `"web_fetch"`) {
		t.Fatalf("web_fetch not offered or no second request (%d requests)", len(reqs))
	}
	for i, target := range targets {
		res := toolMessage(t, reqs[1], fmt.Sprintf("call_%d", i))
		if !strings.Contains(res, "refused") || strings.Contains(res, "internal") {
			t.Errorf("%s: %s", target, res)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached this machine's listeners", n)
	}

	fm2, base2 := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "ok"}}})
	e2 := start(t, fakeeditor.Full(), openaiSettings(base2, nil))
	e2.prompt(e2.newSession(), "hi")
	if r := fm2.Requests(); len(r) == 0 || strings.Contains(string(r[0]), "web_fetch") {
		t.Fatal("web_fetch offered (or named) with the web off")
	}
}
