package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/gemini"
	"github.com/agentd-dev/agentd/providers/providertest"
)

func goldenPath(t *testing.T, name string) string {
	return filepath.Join(providertest.RepoRoot(t), "testdata", "providers", "gemini", "golden", name)
}

// conversation is a second turn after a thinking turn with function calls: tools, function
// responses (one an error), thoughtSignatures on a call and on text, a synthesized id that must
// not be sent back, an image.
func conversation() *providers.Request {
	temp := 0.3
	return &providers.Request{
		Model:       "gemini-2.5-flash",
		System:      "You are a coding agent.",
		Context:     "Open files: main.go",
		MaxTokens:   2048,
		Temperature: &temp,
		Thinking:    providers.Thinking{Enabled: true, BudgetTokens: 2000},
		Tools: []providers.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`)},
		},
		Messages: []providers.Message{
			{Role: providers.RoleUser, Parts: []providers.Part{
				{Type: providers.PartText, Text: "Read main.go and go.mod."},
				{Type: providers.PartImage, MimeType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
			}},
			{Role: providers.RoleAssistant, Parts: []providers.Part{
				{Type: providers.PartThinking, Text: "**Reading files**"},
				{Type: providers.PartToolCall, ToolCallID: "agentd-gemini-ab12-0", ToolName: "read_file", Args: json.RawMessage(`{"path":"main.go"}`), Signature: "CiQBsig1"},
				{Type: providers.PartToolCall, ToolCallID: "fc-real-2", ToolName: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)},
			}},
			{Role: providers.RoleUser, Parts: []providers.Part{
				{Type: providers.PartToolResult, ToolCallID: "agentd-gemini-ab12-0", ToolName: "read_file", Text: "package main\n"},
				{Type: providers.PartToolResult, ToolCallID: "fc-real-2", ToolName: "read_file", Text: "no such file", IsError: true},
			}},
			{Role: providers.RoleAssistant, Parts: []providers.Part{
				{Type: providers.PartThinking, Signature: "CiQBsig2"},
				{Type: providers.PartText, Text: "main.go is a stub; go.mod is missing."},
			}},
			{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "Thanks."}}},
		},
	}
}

func TestRequestGolden(t *testing.T) {
	b, err := gemini.BuildRequest(conversation(), "")
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, goldenPath(t, "request_tools_signatures.json"), b)

	b, err = gemini.BuildRequest(&providers.Request{Messages: []providers.Message{
		{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "hi"}}},
	}}, "gemini-2.0-flash")
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, goldenPath(t, "request_minimal_no_thinking_model.json"), b)

	// A tool result's images go inside its functionResponse (multimodal function responses).
	b, err = gemini.BuildRequest(&providers.Request{Messages: providertest.ToolImages()}, "gemini-2.5-flash")
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, goldenPath(t, "request_tool_result_images.json"), b)
}

func TestThinkingBudget(t *testing.T) {
	for _, c := range []struct {
		model    string
		thinking providers.Thinking
		want     string // the thinkingConfig JSON, or "" for none
	}{
		{"gemini-2.5-flash", providers.Thinking{}, `{"thinkingBudget":0}`},
		{"gemini-2.5-flash", providers.Thinking{Enabled: true}, `{"thinkingBudget":-1,"includeThoughts":true}`},
		{"gemini-2.5-flash", providers.Thinking{Enabled: true, BudgetTokens: 99999}, `{"thinkingBudget":24576,"includeThoughts":true}`},
		{"gemini-2.5-pro", providers.Thinking{}, `{"thinkingBudget":128}`},
		{"gemini-2.5-pro", providers.Thinking{Enabled: true, BudgetTokens: 10}, `{"thinkingBudget":128,"includeThoughts":true}`},
		{"models/gemini-3-pro-preview", providers.Thinking{}, `{"thinkingBudget":128}`},
		{"gemini-2.5-flash-lite", providers.Thinking{Enabled: true, BudgetTokens: 100}, `{"thinkingBudget":512,"includeThoughts":true}`},
		{"gemini-2.5-flash-lite", providers.Thinking{}, `{"thinkingBudget":0}`},
		{"gemini-2.0-flash", providers.Thinking{Enabled: true, BudgetTokens: 1000}, ``},
	} {
		b, err := gemini.BuildRequest(&providers.Request{Model: c.model, Thinking: c.thinking}, "")
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			GenerationConfig struct {
				ThinkingConfig json.RawMessage `json:"thinkingConfig"`
			} `json:"generationConfig"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if string(got.GenerationConfig.ThinkingConfig) != c.want {
			t.Errorf("%s %+v: thinkingConfig = %s, want %s", c.model, c.thinking, got.GenerationConfig.ThinkingConfig, c.want)
		}
	}
}

func TestURLAndHeaders(t *testing.T) {
	dir := filepath.Join(providertest.RepoRoot(t), "testdata", "providers", "gemini")
	for _, key := range []string{"AIza-1", ""} {
		c := providers.Config{Model: "models/gemini-2.5-flash", APIKey: key, Headers: map[string]string{"X-Extra": "1"}}
		o, srv, _ := providertest.Replay(t, newGemini, c, filepath.Join(dir, "text.sse"), req)
		if o.Stop != providers.StopEndTurn {
			t.Fatalf("outcome %+v", o)
		}
		ex := srv.Requests()[0]
		if ex.Method != "POST" || ex.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" {
			t.Errorf("request = %s %s", ex.Method, ex.Path)
		}
		if _, has := ex.Header["X-Goog-Api-Key"]; has != (key != "") || ex.Header.Get("X-Goog-Api-Key") != key || ex.Header.Get("X-Extra") != "1" {
			t.Errorf("headers = %v", ex.Header)
		}
	}
}

func TestListModels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-goog-api-key") != "k" || r.URL.Path != "/v1beta/models" {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`)
			return
		}
		if r.URL.Query().Get("pageToken") == "" {
			fmt.Fprint(w, `{"models":[{"name":"models/gemini-2.5-flash","supportedGenerationMethods":["generateContent","countTokens"]},{"name":"models/text-embedding-004","supportedGenerationMethods":["embedContent"]},{"name":"models/aqa","supportedGenerationMethods":["generateAnswer"]}],"nextPageToken":"p2"}`)
			return
		}
		fmt.Fprint(w, `{"models":[{"name":"models/gemini-2.5-pro","supportedGenerationMethods":["generateContent"]}]}`)
	}))
	defer srv.Close()
	p, _ := gemini.NewWithTransport(providers.Config{BaseURL: srv.URL + "/v1beta/", APIKey: "k"}, providertest.Transport(&providertest.Sleeps{}))
	got, err := p.(providers.ModelLister).ListModels(context.Background())
	// Embedding models are listed too (agent/providers/test shows them apart); a model that can
	// do neither is not.
	if err != nil || fmt.Sprint(got) != "[gemini-2.5-flash text-embedding-004 gemini-2.5-pro]" {
		t.Fatalf("models = %v err = %v", got, err)
	}
	p, _ = gemini.NewWithTransport(providers.Config{BaseURL: srv.URL, APIKey: "bad"}, providertest.Transport(&providertest.Sleeps{}))
	_, err = p.(providers.ModelLister).ListModels(context.Background())
	if pe, ok := err.(*providers.Error); !ok || pe.Kind != providers.ErrAuth {
		t.Fatalf("err = %v", err)
	}
}

// cacheServer plays cachedContents and streamGenerateContent, recording what it saw.
type cacheServer struct {
	t          *testing.T
	mu         sync.Mutex
	creates    int
	createFail int              // answer creates with this status when non-zero
	refuseUse  bool             // answer generate requests that name a cache with 404
	generates  []map[string]any // decoded generate bodies
	createBody []map[string]any // decoded create bodies
	srv        *httptest.Server
}

const okStream = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ok\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":5000,\"cachedContentTokenCount\":4900,\"candidatesTokenCount\":1}}\r\n\r\n"

func newCacheServer(t *testing.T) *cacheServer {
	cs := &cacheServer{t: t}
	cs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		cs.mu.Lock()
		defer cs.mu.Unlock()
		switch {
		case r.URL.Path == "/v1beta/cachedContents":
			cs.creates++
			cs.createBody = append(cs.createBody, body)
			if cs.createFail != 0 {
				w.WriteHeader(cs.createFail)
				fmt.Fprint(w, `{"error":{"code":403,"message":"Caching is not supported on the free tier.","status":"PERMISSION_DENIED"}}`)
				return
			}
			fmt.Fprintf(w, `{"name":"cachedContents/c%d","model":"models/gemini-2.5-flash"}`, cs.creates)
		case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
			cs.generates = append(cs.generates, body)
			if cs.refuseUse && body["cachedContent"] != nil {
				w.WriteHeader(404)
				fmt.Fprint(w, `{"error":{"code":404,"message":"CachedContent not found (or permission denied)","status":"NOT_FOUND"}}`)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, okStream)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(cs.srv.Close)
	return cs
}

func bigRequest(turns int) *providers.Request {
	r := &providers.Request{
		System:  strings.Repeat("You are a careful coding agent. ", 400), // ~12 KB, over 1024 tokens
		Context: "Open files: main.go",
		Tools:   []providers.ToolSpec{{Name: "read_file", Schema: json.RawMessage(`{"type":"object"}`)}},
	}
	for i := 0; i < turns; i++ {
		r.Messages = append(r.Messages,
			providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: fmt.Sprintf("question %d", i)}}},
			providers.Message{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartText, Text: fmt.Sprintf("answer %d", i)}}})
	}
	r.Messages = append(r.Messages, providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "next"}}})
	return r
}

func run(t *testing.T, p providers.Provider, r *providers.Request) providertest.Outcome {
	t.Helper()
	o := providertest.Collect(t, p.Stream(context.Background(), r))
	if o.Stop != providers.StopEndTurn || o.Text != "ok" {
		t.Fatalf("outcome: %s", providertest.Dump(o.Events))
	}
	return o
}

func TestContextCachingUsedFromTheSecondTurn(t *testing.T) {
	cs := newCacheServer(t)
	p, _ := gemini.NewWithTransport(providers.Config{BaseURL: cs.srv.URL, Model: "gemini-2.5-flash"}, providertest.Transport(&providertest.Sleeps{}))

	run(t, p, bigRequest(0)) // single-shot first turn: inline, no cache
	run(t, p, bigRequest(1)) // creates the cache and uses it
	run(t, p, bigRequest(2)) // reuses it
	if cs.creates != 1 || len(cs.generates) != 3 {
		t.Fatalf("creates = %d generates = %d", cs.creates, len(cs.generates))
	}
	first, second, third := cs.generates[0], cs.generates[1], cs.generates[2]
	if first["cachedContent"] != nil || first["systemInstruction"] == nil || first["tools"] == nil {
		t.Errorf("first turn was not inline: %v", keys(first))
	}
	for _, g := range []map[string]any{second, third} {
		if g["cachedContent"] != "cachedContents/c1" || g["systemInstruction"] != nil || g["tools"] != nil {
			t.Errorf("later turn did not use the cache alone: %v", keys(g))
		}
		// The live context moved to the head of the first user turn.
		contents := g["contents"].([]any)
		firstPart := contents[0].(map[string]any)["parts"].([]any)[0].(map[string]any)
		if firstPart["text"] != "Open files: main.go" {
			t.Errorf("live context not sent: %v", firstPart)
		}
	}
	cb := cs.createBody[0]
	if cb["model"] != "models/gemini-2.5-flash" || cb["ttl"] != "600s" || cb["systemInstruction"] == nil || cb["tools"] == nil {
		t.Errorf("create body: %v", keys(cb))
	}
}

func TestContextCachingSkippedBelowTheMinimum(t *testing.T) {
	cs := newCacheServer(t)
	p, _ := gemini.NewWithTransport(providers.Config{BaseURL: cs.srv.URL, Model: "gemini-2.5-flash"}, providertest.Transport(&providertest.Sleeps{}))
	r := bigRequest(2)
	r.System = "Short."
	run(t, p, r)
	if cs.creates != 0 || cs.generates[0]["cachedContent"] != nil {
		t.Fatalf("creates = %d", cs.creates)
	}
}

func TestContextCachingCreateErrorFallsBackOnceAndForAll(t *testing.T) {
	cs := newCacheServer(t)
	cs.createFail = 403
	p, _ := gemini.NewWithTransport(providers.Config{BaseURL: cs.srv.URL, Model: "gemini-2.5-flash"}, providertest.Transport(&providertest.Sleeps{}))
	o := run(t, p, bigRequest(1))
	run(t, p, bigRequest(2))
	if cs.creates != 1 {
		t.Fatalf("creates = %d, want 1 (the failure must be remembered)", cs.creates)
	}
	for _, g := range cs.generates {
		if g["cachedContent"] != nil || g["systemInstruction"] == nil {
			t.Errorf("not inline: %v", keys(g))
		}
	}
	if len(o.Notices) != 1 || !strings.Contains(o.Notices[0], "inline") {
		t.Errorf("notices = %q", o.Notices)
	}
}

func TestContextCachingRefusedAtUseFallsBackInline(t *testing.T) {
	cs := newCacheServer(t)
	cs.refuseUse = true
	p, _ := gemini.NewWithTransport(providers.Config{BaseURL: cs.srv.URL, Model: "gemini-2.5-flash"}, providertest.Transport(&providertest.Sleeps{}))
	o := run(t, p, bigRequest(1))
	run(t, p, bigRequest(2))
	// Turn 1: cached attempt refused, then inline. Turn 2: inline straight away.
	if cs.creates != 1 || len(cs.generates) != 3 {
		t.Fatalf("creates = %d generates = %d", cs.creates, len(cs.generates))
	}
	if cs.generates[0]["cachedContent"] == nil || cs.generates[1]["cachedContent"] != nil || cs.generates[2]["cachedContent"] != nil {
		t.Errorf("sequence wrong: %v / %v / %v", keys(cs.generates[0]), keys(cs.generates[1]), keys(cs.generates[2]))
	}
	if len(o.Notices) != 1 || !strings.Contains(o.Notices[0], "inline") {
		t.Errorf("notices = %q", o.Notices)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestDefaultBaseURL(t *testing.T) {
	var got []string
	p, _ := gemini.NewWithTransport(providers.Config{Model: "gemini-2.5-flash"}, providertest.Offline(&got))
	o := providertest.Collect(t, p.Stream(context.Background(), req))
	if len(got) != 1 || got[0] != "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" || o.ErrKind() != providers.ErrNetwork {
		t.Fatalf("urls %q outcome %+v", got, o.Err)
	}
	p, _ = gemini.New(providers.Config{})
	if o := providertest.Collect(t, p.Stream(context.Background(), req)); o.ErrKind() != providers.ErrInvalidRequest {
		t.Fatalf("no model: %+v", o.Err)
	}
}

func TestCancelAndBreakCloseTheSocket(t *testing.T) {
	for _, mode := range []string{"cancel", "break"} {
		t.Run(mode, func(t *testing.T) {
			hangUp := providertest.NewHangUp()
			srv := httptest.NewServer(hangUp.Handler("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]}}]}\r\n\r\n"))
			defer srv.Close()
			p, _ := gemini.NewWithTransport(providers.Config{BaseURL: srv.URL, Model: "gemini-2.5-flash"}, providertest.Transport(&providertest.Sleeps{}))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var last providers.Event
			for ev := range p.Stream(ctx, req) {
				last = ev
				if ev.Type == providers.EventTextDelta {
					if mode == "break" {
						break
					}
					cancel()
				}
			}
			if mode == "cancel" && (last.Type != providers.EventFailed || last.Err.Kind != providers.ErrCancelled) {
				t.Fatalf("last %+v", last)
			}
			hangUp.Wait(t)
		})
	}
}
