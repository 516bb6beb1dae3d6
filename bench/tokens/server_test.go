package tokens

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/anthropic"
	"github.com/agentd-dev/agentd/providers/gemini"
	"github.com/agentd-dev/agentd/providers/openai"
)

// recorded is one request the server received.
type recorded struct {
	path string
	body []byte
	// step is the 1-based step a model request asked for; 0 for any other request (Gemini's
	// cachedContents).
	step int
	// route is the session it belongs to, on a server of several.
	route string
	// name is the name the server gave what the request made (a cachedContents resource).
	name string
}

// server answers one dialect's requests from the script and records each body. It serves one
// session, or several told apart by route (the session a body belongs to, "" for none), each
// with its own count of steps.
type server struct {
	srv    *httptest.Server
	steps  atomic.Int32 // the one session's, without route
	mu     sync.Mutex
	bodies []recorded
	route  func(body []byte) (string, error)
	counts map[string]*atomic.Int32
	names  atomic.Int32 // cachedContents made
}

func newServer(t testing.TB, d *dialect, script []step) *server {
	return newRoutedServer(t, d, script, nil)
}

// newRoutedServer is newServer for several sessions: route says whose a body is, and each gets
// the step counter counter(route).
func newRoutedServer(t testing.TB, d *dialect, script []step, route func(body []byte) (string, error)) *server {
	s := &server{route: route, counts: map[string]*atomic.Int32{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		key := ""
		if s.route != nil {
			if key, err = s.route(body); err != nil {
				t.Errorf("%s %s: %v", r.Method, r.URL.Path, err)
				http.Error(w, `{"error":{"message":"unroutable"}}`, http.StatusBadRequest)
				return
			}
		}
		if d.side != nil {
			if name, ok := d.side(w, r, s); ok {
				s.mu.Lock()
				s.bodies = append(s.bodies, recorded{path: r.URL.Path, body: body, route: key, name: name})
				s.mu.Unlock()
				return
			}
		}
		n := int(s.counter(key).Add(1))
		s.mu.Lock()
		s.bodies = append(s.bodies, recorded{path: r.URL.Path, body: body, step: n, route: key})
		s.mu.Unlock()
		if n > len(script) {
			http.Error(w, `{"error":{"type":"invalid_request_error","message":"the script has no step `+fmt.Sprint(n)+`"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, d.reply(n, script[n-1]))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// counter is the step counter of the session route names.
func (s *server) counter(route string) *atomic.Int32 {
	if s.route == nil {
		return &s.steps
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.counts[route]
	if c == nil {
		c = new(atomic.Int32)
		s.counts[route] = c
	}
	return c
}

func (s *server) URL() string { return s.srv.URL }

func (s *server) recorded() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.bodies...)
}

// dialect is one wire dialect: its real provider pointed at the server, the server's scripted
// replies in its stream format, and how its requests are measured.
type dialect struct {
	name     string
	provider func(t testing.TB, base string) (providers.Provider, providers.Config)
	// reply is step s, the n-th, as the dialect's SSE stream.
	reply func(n int, s step) string
	// side answers a request that is not a model request (true when it did), with the name of
	// what it made.
	side func(w http.ResponseWriter, r *http.Request, s *server) (name string, ok bool)
	// measure computes each step's figures from the recorded requests.
	measure func(reqs []recorded) ([]figure, error)
}

func sse(event string, v any) string {
	b, _ := json.Marshal(v)
	if event == "" {
		return "data: " + string(b) + "\n\n"
	}
	return "event: " + event + "\ndata: " + string(b) + "\n\n"
}

type obj = map[string]any

var anthropicDialect = &dialect{
	name: "anthropic",
	provider: func(t testing.TB, base string) (providers.Provider, providers.Config) {
		cfg := providers.Config{ID: "anthropic", APIType: "anthropic", BaseURL: base, Model: "claude-sonnet-4-5", APIKey: "sk-ant-bench"}
		p, err := anthropic.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p, cfg
	},
	reply: func(n int, s step) string {
		var b strings.Builder
		b.WriteString(sse("message_start", obj{"type": "message_start", "message": obj{"id": fmt.Sprintf("msg_%02d", n), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{}, "usage": obj{"input_tokens": 10, "output_tokens": 1}}}))
		i := 0
		block := func(start obj, deltas ...obj) {
			b.WriteString(sse("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": start}))
			for _, d := range deltas {
				b.WriteString(sse("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": d}))
			}
			b.WriteString(sse("content_block_stop", obj{"type": "content_block_stop", "index": i}))
			i++
		}
		block(obj{"type": "thinking", "thinking": ""}, obj{"type": "thinking_delta", "thinking": "Step " + fmt.Sprint(n) + ": " + s.text}, obj{"type": "signature_delta", "signature": fmt.Sprintf("EqQBsig%02d", n)})
		block(obj{"type": "text", "text": ""}, obj{"type": "text_delta", "text": s.text})
		for j, c := range s.calls {
			block(obj{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d_%d", n, j), "name": c.name, "input": obj{}}, obj{"type": "input_json_delta", "partial_json": c.args})
		}
		stop := "end_turn"
		if len(s.calls) > 0 {
			stop = "tool_use"
		}
		b.WriteString(sse("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop}, "usage": obj{"output_tokens": 40}}))
		b.WriteString(sse("message_stop", obj{"type": "message_stop"}))
		return b.String()
	},
	measure: measureAnthropic,
}

var openaiDialect = &dialect{
	name: "openai",
	provider: func(t testing.TB, base string) (providers.Provider, providers.Config) {
		cfg := providers.Config{ID: "openai", APIType: "openai", BaseURL: base + "/v1", Model: "gpt-5", APIKey: "sk-bench"}
		p, err := openai.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p, cfg
	},
	reply: func(n int, s step) string {
		var b strings.Builder
		chunk := func(delta obj, finish any) {
			b.WriteString(sse("", obj{"id": fmt.Sprintf("chatcmpl-%02d", n), "object": "chat.completion.chunk", "model": "gpt-5", "choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}}))
		}
		chunk(obj{"role": "assistant", "content": s.text}, nil)
		for j, c := range s.calls {
			chunk(obj{"tool_calls": []any{obj{"index": j, "id": fmt.Sprintf("call_%02d_%d", n, j), "type": "function", "function": obj{"name": c.name, "arguments": c.args}}}}, nil)
		}
		finish := "stop"
		if len(s.calls) > 0 {
			finish = "tool_calls"
		}
		chunk(obj{}, finish)
		b.WriteString(sse("", obj{"id": fmt.Sprintf("chatcmpl-%02d", n), "object": "chat.completion.chunk", "choices": []any{}, "usage": obj{"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}}))
		b.WriteString("data: [DONE]\n\n")
		return b.String()
	},
	measure: measureOpenAI,
}

var geminiDialect = &dialect{
	name: "gemini",
	provider: func(t testing.TB, base string) (providers.Provider, providers.Config) {
		cfg := providers.Config{ID: "gemini", APIType: "gemini", BaseURL: base, Model: "gemini-2.5-pro", APIKey: "gm-bench"}
		p, err := gemini.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p, cfg
	},
	reply: func(n int, s step) string {
		parts := []any{obj{"text": s.text}}
		for _, c := range s.calls {
			parts = append(parts, obj{"functionCall": obj{"name": c.name, "args": json.RawMessage(c.args)}})
		}
		return sse("", obj{"candidates": []any{obj{"content": obj{"role": "model", "parts": parts}, "index": 0, "finishReason": "STOP"}}, "usageMetadata": obj{"promptTokenCount": 10, "candidatesTokenCount": 40, "totalTokenCount": 50}})
	},
	side: func(w http.ResponseWriter, r *http.Request, s *server) (string, bool) {
		if !strings.HasSuffix(r.URL.Path, "/cachedContents") {
			return "", false
		}
		name := fmt.Sprint("cachedContents/bench-", s.names.Add(1))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":%q}`, name)
		return name, true
	},
	measure: measureGemini,
}

var dialects = []*dialect{anthropicDialect, openaiDialect, geminiDialect}
