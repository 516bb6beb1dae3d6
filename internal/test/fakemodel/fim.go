package fakemodel

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// FIMScript scripts POST /v1/completions, the OpenAI-compatible legacy completions endpoint
// that vLLM, LM Studio, DeepSeek and Ollama's /v1 serve fill-in-the-middle on: a request
// {model, prompt, suffix, max_tokens, stream: false} answers
// {id, object: "text_completion", model, choices: [{index, text, finish_reason}]}.
type FIMScript struct {
	// Rules are tried in order: the first whose After the prompt ends with answers its Text.
	// A prompt no rule matches answers Default.
	Rules   []FIMRule `json:"rules,omitempty"`
	Default string    `json:"default,omitempty"`
	// DelayMs is the fixed latency of every answer (a real model's time to first token).
	DelayMs int `json:"delayMs,omitempty"`
}

// FIMRule answers a prompt that ends with After.
type FIMRule struct {
	After string `json:"after"`
	Text  string `json:"text"`
}

// FIMStats counts what /v1/completions saw.
type FIMStats struct {
	Requests  int // requests received
	Completed int // answered in full (not dropped by the client mid-delay)
	// MaxInFlight is the most requests being answered at once. A request whose client has
	// closed its connection (how an HTTP/1.1 client cancels) is not counted from the moment the
	// close reaches this machine, even before its handler has run to notice: a client that
	// cancels one request and then sends the next never has two in flight, however slowly the
	// server's goroutines are scheduled.
	MaxInFlight int
	// Busy is the time the handler spent on the answered requests, from reading the body to
	// writing the answer (the scripted delay and the timer's overshoot included), so a benchmark
	// can subtract the server's own time from a round trip.
	Busy time.Duration
}

type fimState struct {
	mu    sync.Mutex
	live  map[*http.Request]struct{} // requests being answered
	stats FIMStats
}

// connKey holds the request's connection in its context (Server.Start's ConnContext).
type connKey struct{}

// stillWanted reports whether the client of r may still want its answer: its context is not
// done, and its connection, when the server knows it, has not been closed by the client.
func stillWanted(r *http.Request) bool {
	if r.Context().Err() != nil {
		return false
	}
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	return c == nil || !peerClosed(c)
}

// FIMStats returns a copy of the /v1/completions counters.
func (s *Server) FIMStats() FIMStats {
	s.fim.mu.Lock()
	defer s.fim.mu.Unlock()
	return s.fim.stats
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, err := readAll(w, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Model  string `json:"model"`
		Prompt string `json:"prompt"`
		Suffix string `json:"suffix"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":null}}`+"\n", "fakemodel: body is not JSON: "+err.Error())
		return
	}
	if s.onReq != nil {
		s.onReq(body)
	}
	sc := s.script.FIM
	if sc == nil {
		sc = &FIMScript{}
	}
	st := &s.fim
	st.mu.Lock()
	st.stats.Requests++
	wanted := 1
	for other := range st.live {
		if stillWanted(other) {
			wanted++
		}
	}
	if st.live == nil {
		st.live = map[*http.Request]struct{}{}
	}
	st.live[r] = struct{}{}
	st.stats.MaxInFlight = max(st.stats.MaxInFlight, wanted)
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		delete(st.live, r)
		st.mu.Unlock()
	}()
	if sc.DelayMs > 0 {
		t := time.NewTimer(time.Duration(sc.DelayMs) * time.Millisecond)
		select {
		case <-t.C:
		case <-r.Context().Done(): // the client gave up (a newer keystroke cancelled it)
			t.Stop()
			return
		}
	}
	text := sc.Default
	for _, rule := range sc.Rules {
		if strings.HasSuffix(req.Prompt, rule.After) {
			text = rule.Text
			break
		}
	}
	st.mu.Lock()
	st.stats.Completed++
	st.stats.Busy += time.Since(start)
	n := st.stats.Requests
	st.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("cmpl-fake%d", n), "object": "text_completion", "created": 0, "model": ModelID,
		"choices": []map[string]any{{"index": 0, "text": text, "logprobs": nil, "finish_reason": "stop"}},
	})
}
