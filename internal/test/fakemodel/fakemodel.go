// Package fakemodel is a scripted stand-in for an OpenAI-compatible model
// server. It speaks the real chat-completions wire format (SSE chunks with
// role, content, reasoning_content and tool_calls deltas, a finish chunk, an
// optional usage chunk and "data: [DONE]") so that end-to-end tests of agentd
// and its editor clients exercise the same provider code a user's server
// would, without any network beyond 127.0.0.1.
//
// Each chat request is answered by the next Turn of the Script, in order.
//
// The script format is providers/replay's, with HTTP-only additions: a replay script runs here
// unchanged ("responses", "thinking", "args", "stopReason", "error", "onToolError", "title",
// "summary", "chunkDelayMs"), so one scripted model serves the in-process provider and the wire.
// This package's older spellings ("turns", "reasoning", "arguments", "finishReason") are still
// read. A replay "error" becomes the HTTP status a provider answers that kind of failure with;
// retryable kinds (rate_limit, overloaded, server) are retried by agentd's client, and each
// retry takes the next turn. A replay "usage" ({input, output, cacheRead, cacheWrite}) is what
// the turn's usage chunk reports, as OpenAI counts it (prompt_tokens with the cache reads, and
// prompt_tokens_details); without it the counts are estimated. "notice" has no meaning on this
// wire and is ignored.
// Text is streamed in small pieces with a delay between them so that a test
// can cancel mid-stream; the server stops writing as soon as the client goes
// away, like a real local server does.
package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// ModelID is the only model the server lists and the one it reports in every
// chunk.
const ModelID = "fake-model"

// ExhaustedText is the reply to a chat request that arrives after the script
// has run out of turns (unless Script.RepeatLast is set).
const ExhaustedText = "script exhausted"

// Script is the sequence of replies the server gives.
type Script struct {
	Turns []Turn `json:"turns"`
	// Responses is replay's name for Turns; ParseScript appends them to Turns.
	Responses []Turn `json:"responses,omitempty"`
	// Title and Summary answer a session-title and a compaction request, as in a replay
	// script; ParseScript makes them Routes.
	Title   string `json:"title,omitempty"`
	Summary string `json:"summary,omitempty"`
	// ChunkDelayMs is every turn's default pause between chunks.
	ChunkDelayMs int `json:"chunkDelayMs,omitempty"`
	// RepeatLast answers every request past the end of Turns with the last
	// turn instead of ExhaustedText.
	RepeatLast bool `json:"repeatLast,omitempty"`
	// Routes answer requests whose body contains Match with their Turn,
	// every time, without using up a scripted turn. They keep side requests
	// (e.g. a session-title request a client makes in the background) from
	// racing the agent loop for the scripted turns. The first match wins.
	Routes []Route `json:"routes,omitempty"`
	// FIM answers POST /v1/completions, the OpenAI-compatible fill-in-the-middle endpoint
	// (fim.go).
	FIM *FIMScript `json:"fim,omitempty"`
}

// Route answers every request whose raw body contains Match.
type Route struct {
	Match string `json:"match"`
	Turn  Turn   `json:"turn"`
}

// Turn is one model reply.
type Turn struct {
	Reasoning string     `json:"reasoning,omitempty"`
	Text      string     `json:"text,omitempty"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ChunkDelayMs is the pause before each streamed chunk after the first.
	ChunkDelayMs int `json:"chunkDelayMs,omitempty"`
	// ChunkSize is how many runes of reasoning or text go in one chunk
	// (default 4).
	ChunkSize int `json:"chunkSize,omitempty"`
	// ArgsChunkSize, when set, is how many runes of a tool call's arguments
	// go in one chunk; by default the arguments come in three pieces.
	ArgsChunkSize int `json:"argsChunkSize,omitempty"`
	// FinishReason overrides the computed one ("tool_calls" when the turn
	// has tool calls, else "stop"), e.g. "length".
	FinishReason string `json:"finishReason,omitempty"`
	// Status, when not 0 or 200, answers with that HTTP status and
	// ErrorBody (or a generic OpenAI error object) instead of a stream.
	Status    int             `json:"status,omitempty"`
	ErrorBody json.RawMessage `json:"errorBody,omitempty"`
	// Headers are added to the response (e.g. "retry-after").
	Headers map[string]string `json:"headers,omitempty"`

	// Replay spellings, folded into the fields above by ParseScript.
	Thinking   string          `json:"thinking,omitempty"`
	StopReason string          `json:"stopReason,omitempty"`
	Error      *ScriptError    `json:"error,omitempty"`
	Usage      json.RawMessage `json:"usage,omitempty"`
	Notice     string          `json:"notice,omitempty"`
	// OnToolError replaces this turn when the request ends with a tool result that reports a
	// failure (a refused permission, a failed call): agentd's OpenAI dialect sends those as
	// "Error: …", which is what the server looks for.
	OnToolError *Turn `json:"onToolError,omitempty"`
}

// ScriptError is a replay script's scripted failure.
type ScriptError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// errorStatus is the HTTP status an OpenAI-compatible server answers each failure kind with.
var errorStatus = map[string]int{
	"auth": 401, "permission": 403, "rate_limit": 429, "quota": 429, "overloaded": 503,
	"context_overflow": 400, "invalid_request": 400, "not_found": 404, "content_filter": 400, "server": 500,
}

// normalize folds the replay spellings into the server's own fields.
func (t *Turn) normalize(defaultDelay int) error {
	if t.Reasoning == "" {
		t.Reasoning = t.Thinking
	}
	if t.ChunkDelayMs == 0 {
		t.ChunkDelayMs = defaultDelay
	}
	if t.FinishReason == "" {
		switch t.StopReason {
		case "", "end_turn", "tool_use":
		case "max_tokens":
			t.FinishReason = "length"
		case "refusal":
			t.FinishReason = "content_filter"
		default:
			return fmt.Errorf("stopReason %q", t.StopReason)
		}
	}
	t.ToolCalls = slices.Clone(t.ToolCalls) // the caller's script is not changed
	for i := range t.ToolCalls {
		if len(t.ToolCalls[i].Arguments) == 0 {
			t.ToolCalls[i].Arguments = t.ToolCalls[i].Args
		}
	}
	if e := t.Error; e != nil && (t.Status == 0 || t.Status == http.StatusOK) {
		st, ok := errorStatus[e.Kind]
		if !ok {
			return fmt.Errorf("error kind %q", e.Kind)
		}
		t.Status = st
		code := "null"
		if e.Kind == "context_overflow" {
			code = `"context_length_exceeded"`
		}
		msg, _ := json.Marshal(e.Message)
		t.ErrorBody = json.RawMessage(fmt.Sprintf(`{"error":{"message":%s,"type":%q,"param":null,"code":%s}}`, msg, e.Kind, code))
	}
	if t.OnToolError != nil {
		alt := *t.OnToolError
		t.OnToolError = &alt
		return alt.normalize(defaultDelay)
	}
	return nil
}

// ToolCall is one function call in a turn. Arguments is usually a JSON
// object; a JSON string is sent verbatim as the arguments text, which lets a
// script send malformed arguments.
type ToolCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Args is replay's name for Arguments.
	Args json.RawMessage `json:"args,omitempty"`
}

// argumentsText is what goes on the wire in function.arguments.
func (tc ToolCall) argumentsText() string {
	raw := bytes.TrimSpace(tc.Arguments)
	if len(raw) == 0 {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

// ParseScript decodes a script and checks it.
func ParseScript(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("fakemodel: bad script: %w", err)
	}
	if err := s.fold(); err != nil {
		return Script{}, err
	}
	for i, r := range s.Routes {
		if r.Match == "" {
			return Script{}, fmt.Errorf("fakemodel: route %d has no match", i)
		}
	}
	return s, nil
}

// fold turns the replay spellings into the server's own fields; it is idempotent.
func (s *Script) fold() error {
	s.Turns = append(s.Turns, s.Responses...)
	s.Responses = nil
	for i := range s.Turns {
		t := &s.Turns[i]
		if err := t.normalize(s.ChunkDelayMs); err != nil {
			return fmt.Errorf("fakemodel: turn %d: %w", i, err)
		}
		for j, tc := range t.ToolCalls {
			if tc.Name == "" {
				return fmt.Errorf("fakemodel: turn %d tool call %d has no name", i, j)
			}
		}
	}
	// The requests agentd makes without tools, as the replay provider answers them.
	s.Routes = slices.Clone(s.Routes)
	if s.Title != "" {
		s.Routes = append(s.Routes, Route{Match: "You name coding conversations", Turn: Turn{Text: s.Title}})
	}
	if s.Summary != "" {
		s.Routes = append(s.Routes, Route{Match: "summaries of coding-agent conversations", Turn: Turn{Text: s.Summary}})
	}
	s.Title, s.Summary = "", ""
	return nil
}

// Server is the fake model server. The zero value is not usable; call New.
type Server struct {
	script Script

	mu       sync.Mutex
	next     int
	requests [][]byte
	onReq    func(body []byte)
	changed  chan struct{} // closed and replaced on every recorded request

	srv *http.Server
	ln  net.Listener

	// embedInputs counts the texts /v1/embeddings was asked to embed.
	embedInputs int

	fim fimState

	// streamEnded, when set (by tests), learns how each stream ended.
	streamEnded func(complete bool)
}

// New returns a server that answers with script, its replay spellings folded in (ParseScript
// reports what it cannot fold; here such a turn is played as far as it goes).
func New(script Script) *Server {
	script.Turns = slices.Clone(script.Turns)
	_ = script.fold()
	return &Server{script: script, changed: make(chan struct{})}
}

// OnRequest registers f to be called with every chat request body, after it
// is recorded and before it is answered. Call it before Start.
func (s *Server) OnRequest(f func(body []byte)) { s.onReq = f }

// Handler returns the HTTP handler, for use with httptest.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("POST /v1/completions", s.completions)
	return mux
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background.
// It returns the base URL clients put in front of "/chat/completions",
// e.g. "http://127.0.0.1:41234/v1".
func (s *Server) Start(addr string) (string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }}
	go s.srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/v1", nil
}

// Close stops the server and drops open connections, which ends any stream
// in progress.
func (s *Server) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
}

// Requests returns a copy of every chat request body received so far, in
// arrival order.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.requests))
	for i, r := range s.requests {
		out[i] = append([]byte(nil), r...)
	}
	return out
}

// WaitRequests blocks until at least n chat requests have arrived or ctx
// ends, and returns the requests seen.
func (s *Server) WaitRequests(ctx context.Context, n int) ([][]byte, error) {
	for {
		s.mu.Lock()
		have, ch := len(s.requests), s.changed
		s.mu.Unlock()
		if have >= n {
			return s.Requests(), nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s.Requests(), fmt.Errorf("fakemodel: %d of %d requests: %w", have, n, ctx.Err())
		}
	}
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","created":0,"owned_by":"fakemodel"}]}`+"\n", ModelID)
}

// chatRequest holds the request fields the server looks at.
type chatRequest struct {
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (s *Server) record(body []byte) (Turn, int) {
	s.mu.Lock()
	s.requests = append(s.requests, body)
	close(s.changed)
	s.changed = make(chan struct{})
	for _, r := range s.script.Routes {
		if bytes.Contains(body, []byte(r.Match)) {
			n := len(s.requests) - 1
			s.mu.Unlock()
			return r.Turn, n
		}
	}
	i := s.next
	s.next++
	s.mu.Unlock()
	var t Turn
	switch {
	case i < len(s.script.Turns):
		t = s.script.Turns[i]
	case s.script.RepeatLast && len(s.script.Turns) > 0:
		t = s.script.Turns[len(s.script.Turns)-1]
	default:
		t = Turn{Text: ExhaustedText}
	}
	if t.OnToolError != nil && lastToolFailed(body) {
		t = *t.OnToolError
	}
	return t, i
}

// lastToolFailed reports whether the chat request ends with tool results one of which reports a
// failure (agentd's OpenAI dialect prefixes those with "Error: ").
func lastToolFailed(body []byte) bool {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
		var text string
		if json.Unmarshal(req.Messages[i].Content, &text) == nil && strings.HasPrefix(text, "Error: ") {
			return true
		}
	}
	return false
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := readAll(w, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":null}}`+"\n", "fakemodel: body is not JSON: "+err.Error())
		return
	}
	turn, n := s.record(body)
	if s.onReq != nil {
		s.onReq(body)
	}
	for k, v := range turn.Headers {
		w.Header().Set(k, v)
	}
	if turn.Status != 0 && turn.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(turn.Status)
		if len(turn.ErrorBody) > 0 {
			w.Write(turn.ErrorBody)
		} else {
			fmt.Fprintf(w, `{"error":{"message":"fakemodel: scripted status %d","type":"server_error","param":null,"code":null}}`, turn.Status)
		}
		return
	}
	id := fmt.Sprintf("chatcmpl-fake%d", n+1)
	if !req.Stream {
		s.whole(w, id, n, turn, len(body))
		return
	}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	complete := s.stream(r.Context(), w, id, n, turn, includeUsage, len(body))
	if s.streamEnded != nil {
		s.streamEnded(complete)
	}
}

func readAll(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, 64<<20))
	return buf.Bytes(), err
}

// Wire shapes, kept as in OpenAI's streaming responses.
type (
	chunk struct {
		ID                string   `json:"id"`
		Object            string   `json:"object"`
		Created           int64    `json:"created"`
		Model             string   `json:"model"`
		SystemFingerprint *string  `json:"system_fingerprint"`
		Choices           []choice `json:"choices"`
		Usage             *usage   `json:"usage"`
	}
	choice struct {
		Index        int     `json:"index"`
		Delta        delta   `json:"delta"`
		Logprobs     *string `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
	}
	delta struct {
		Role             string          `json:"role,omitempty"`
		Content          *string         `json:"content,omitempty"`
		ReasoningContent *string         `json:"reasoning_content,omitempty"`
		ToolCalls        []toolCallDelta `json:"tool_calls,omitempty"`
	}
	toolCallDelta struct {
		Index    int           `json:"index"`
		ID       string        `json:"id,omitempty"`
		Type     string        `json:"type,omitempty"`
		Function functionDelta `json:"function"`
	}
	functionDelta struct {
		Name      string  `json:"name,omitempty"`
		Arguments *string `json:"arguments,omitempty"`
	}
	usage struct {
		PromptTokens        int           `json:"prompt_tokens"`
		CompletionTokens    int           `json:"completion_tokens"`
		TotalTokens         int           `json:"total_tokens"`
		PromptTokensDetails *promptDetail `json:"prompt_tokens_details,omitempty"`
	}
	promptDetail struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	}
)

func strp(s string) *string { return &s }

// created is a fixed timestamp so that streams are reproducible.
const created = 1782321890

func (t Turn) finishReason() string {
	if t.FinishReason != "" {
		return t.FinishReason
	}
	if len(t.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func (t Turn) toolCallID(turn, i int) string {
	if id := t.ToolCalls[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("call_fake_%d_%d", turn+1, i)
}

// usageFor estimates token counts the way a rough tokenizer would (four
// bytes a token), so that usage numbers grow with the conversation.
func (t Turn) usageFor(requestBytes int) *usage {
	var given struct {
		Input      int `json:"input"`
		Output     int `json:"output"`
		CacheRead  int `json:"cacheRead"`
		CacheWrite int `json:"cacheWrite"`
	}
	if len(t.Usage) > 0 && json.Unmarshal(t.Usage, &given) == nil {
		prompt := given.Input + given.CacheRead
		return &usage{PromptTokens: prompt, CompletionTokens: given.Output, TotalTokens: prompt + given.Output,
			PromptTokensDetails: &promptDetail{CachedTokens: given.CacheRead, CacheWriteTokens: given.CacheWrite}}
	}
	completion := (len(t.Reasoning) + len(t.Text) + 3) / 4
	for _, tc := range t.ToolCalls {
		completion += (len(tc.Name) + len(tc.argumentsText()) + 3) / 4
	}
	prompt := (requestBytes + 3) / 4
	return &usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// splitRunes cuts s into pieces of size runes.
func splitRunes(s string, size int) []string {
	if size <= 0 {
		size = 4
	}
	var out []string
	rs := []rune(s)
	for len(rs) > 0 {
		n := min(size, len(rs))
		out = append(out, string(rs[:n]))
		rs = rs[n:]
	}
	return out
}

// splitArgs cuts a tool call's arguments text into at most three pieces, as
// providers do when they stream arguments.
func splitArgs(s string) []string {
	rs := []rune(s)
	if len(rs) < 3 {
		return []string{s}
	}
	a, b := len(rs)/3, 2*len(rs)/3
	return []string{string(rs[:a]), string(rs[a:b]), string(rs[b:])}
}

var errGone = errors.New("fakemodel: client went away")

// stream writes one turn as SSE and reports whether it got to the end.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, id string, n int, t Turn, includeUsage bool, reqBytes int) bool {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	delay := time.Duration(t.ChunkDelayMs) * time.Millisecond
	first := true
	send := func(c chunk) error {
		if !first && delay > 0 {
			timer := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				timer.Stop()
				return errGone
			case <-timer.C:
			}
		}
		if ctx.Err() != nil {
			return errGone
		}
		first = false
		c.ID, c.Object, c.Created, c.Model = id, "chat.completion.chunk", created, ModelID
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return errGone
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	one := func(d delta, finish *string) chunk {
		return chunk{Choices: []choice{{Index: 0, Delta: d, FinishReason: finish}}}
	}

	if err := send(one(delta{Role: "assistant", Content: strp("")}, nil)); err != nil {
		return false
	}
	for _, p := range splitRunes(t.Reasoning, t.ChunkSize) {
		if err := send(one(delta{ReasoningContent: strp(p)}, nil)); err != nil {
			return false
		}
	}
	for _, p := range splitRunes(t.Text, t.ChunkSize) {
		if err := send(one(delta{Content: strp(p)}, nil)); err != nil {
			return false
		}
	}
	for i, tc := range t.ToolCalls {
		head := toolCallDelta{Index: i, ID: t.toolCallID(n, i), Type: "function",
			Function: functionDelta{Name: tc.Name, Arguments: strp("")}}
		if err := send(one(delta{ToolCalls: []toolCallDelta{head}}, nil)); err != nil {
			return false
		}
		pieces := splitArgs(tc.argumentsText())
		if t.ArgsChunkSize > 0 {
			pieces = splitRunes(tc.argumentsText(), t.ArgsChunkSize)
		}
		for _, p := range pieces {
			d := toolCallDelta{Index: i, Function: functionDelta{Arguments: strp(p)}}
			if err := send(one(delta{ToolCalls: []toolCallDelta{d}}, nil)); err != nil {
				return false
			}
		}
	}
	if err := send(one(delta{}, strp(t.finishReason()))); err != nil {
		return false
	}
	if includeUsage {
		if err := send(chunk{Choices: []choice{}, Usage: t.usageFor(reqBytes)}); err != nil {
			return false
		}
	}
	if ctx.Err() != nil {
		return false
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
	return true
}

// whole answers a request with stream=false with one chat.completion object.
func (s *Server) whole(w http.ResponseWriter, id string, n int, t Turn, reqBytes int) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type message struct {
		Role             string  `json:"role"`
		Content          *string `json:"content"`
		ReasoningContent string  `json:"reasoning_content,omitempty"`
		ToolCalls        []call  `json:"tool_calls,omitempty"`
	}
	msg := message{Role: "assistant", ReasoningContent: t.Reasoning}
	if t.Text != "" || len(t.ToolCalls) == 0 {
		msg.Content = strp(t.Text)
	}
	for i, tc := range t.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, call{ID: t.toolCallID(n, i), Type: "function",
			Function: fn{Name: tc.Name, Arguments: tc.argumentsText()}})
	}
	resp := map[string]any{
		"id": id, "object": "chat.completion", "created": created, "model": ModelID,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": t.finishReason()}},
		"usage":   t.usageFor(reqBytes),
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// TextOf returns the concatenated content deltas of an SSE body produced by
// the server; tests use it to check what a client would see.
func TextOf(sse string) string {
	var b strings.Builder
	for _, line := range strings.Split(sse, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c chunk
		if json.Unmarshal([]byte(data), &c) != nil {
			continue
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				b.WriteString(*ch.Delta.Content)
			}
		}
	}
	return b.String()
}
