package fakemodel

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// sse posts a chat request and returns the decoded data payloads.
func post(t *testing.T, url, body string) (*http.Response, []string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var datas []string
	for _, line := range strings.Split(string(raw), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			datas = append(datas, d)
		} else if line != "" {
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return resp, datas
}

func decode(t *testing.T, data string) chunk {
	t.Helper()
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("bad chunk %q: %v", data, err)
	}
	return c
}

const streamReq = `{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

func TestStreamTextReasoningUsage(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Reasoning: "think hard", Text: "Olá, mundo!", ChunkSize: 3}}})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	resp, datas := post(t, ts.URL, streamReq)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content-type %q", ct)
	}
	if datas[len(datas)-1] != "[DONE]" {
		t.Fatalf("last data %q, want [DONE]", datas[len(datas)-1])
	}
	chunks := datas[:len(datas)-1]
	first := decode(t, chunks[0])
	if first.Object != "chat.completion.chunk" || first.Model != ModelID || first.Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk %s", chunks[0])
	}
	var text, reasoning []string
	var finish string
	for _, d := range chunks[1 : len(chunks)-1] {
		c := decode(t, d)
		if len(c.Choices) != 1 {
			t.Fatalf("chunk %s has %d choices", d, len(c.Choices))
		}
		ch := c.Choices[0]
		if ch.Delta.Content != nil {
			text = append(text, *ch.Delta.Content)
		}
		if ch.Delta.ReasoningContent != nil {
			reasoning = append(reasoning, *ch.Delta.ReasoningContent)
		}
		if ch.FinishReason != nil {
			finish = *ch.FinishReason
		}
	}
	if got := strings.Join(text, ""); got != "Olá, mundo!" {
		t.Errorf("text %q", got)
	}
	if len(text) != 4 || text[0] != "Olá" {
		t.Errorf("text chunks %q, want 3-rune pieces", text)
	}
	if got := strings.Join(reasoning, ""); got != "think hard" {
		t.Errorf("reasoning %q", got)
	}
	if finish != "stop" {
		t.Errorf("finish_reason %q", finish)
	}
	last := decode(t, chunks[len(chunks)-1])
	if last.Choices == nil || len(last.Choices) != 0 || last.Usage == nil || last.Usage.TotalTokens == 0 {
		t.Errorf("usage chunk %s", chunks[len(chunks)-1])
	}
	if !strings.Contains(chunks[len(chunks)-1], `"choices":[]`) {
		t.Errorf("usage chunk must carry choices:[]: %s", chunks[len(chunks)-1])
	}
	if got := TextOf(strings.Join(prefix(datas), "\n")); got != "Olá, mundo!" {
		t.Errorf("TextOf %q", got)
	}
}

func prefix(datas []string) []string {
	out := make([]string, len(datas))
	for i, d := range datas {
		out[i] = "data: " + d
	}
	return out
}

func TestStreamToolCalls(t *testing.T) {
	srv := New(Script{Turns: []Turn{{
		Text: "reading",
		ToolCalls: []ToolCall{
			{Name: "read_file", Arguments: json.RawMessage(`{"path": "a.txt"}`)},
			{Name: "edit_file", ID: "call_x", Arguments: json.RawMessage(`"{\"path\":"`)},
		},
	}}})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	_, datas := post(t, ts.URL, `{"stream":true,"messages":[]}`)
	type acc struct{ id, typ, name, args string }
	calls := map[int]*acc{}
	var finish string
	var sawUsage bool
	for _, d := range datas[:len(datas)-1] {
		c := decode(t, d)
		if c.Usage != nil {
			sawUsage = true
		}
		for _, ch := range c.Choices {
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
			for _, tc := range ch.Delta.ToolCalls {
				a := calls[tc.Index]
				if a == nil {
					a = &acc{}
					calls[tc.Index] = a
					if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
						t.Errorf("first delta of call %d lacks id/type/name: %s", tc.Index, d)
					}
				}
				a.id += tc.ID
				a.typ += tc.Type
				a.name += tc.Function.Name
				if tc.Function.Arguments != nil {
					a.args += *tc.Function.Arguments
				}
			}
		}
	}
	if sawUsage {
		t.Error("usage chunk sent without stream_options.include_usage")
	}
	if finish != "tool_calls" {
		t.Errorf("finish_reason %q", finish)
	}
	if len(calls) != 2 {
		t.Fatalf("got %d calls", len(calls))
	}
	if c := calls[0]; c.name != "read_file" || c.args != `{"path":"a.txt"}` || c.typ != "function" {
		t.Errorf("call 0 = %+v", *c)
	}
	if c := calls[1]; c.id != "call_x" || c.name != "edit_file" || c.args != `{"path":` {
		t.Errorf("call 1 = %+v", *c)
	}
	argChunks := 0
	for _, d := range datas {
		if strings.Contains(d, `"index":0,"function":{"arguments"`) {
			argChunks++
		}
	}
	if argChunks < 2 {
		t.Errorf("arguments of call 0 came in %d chunks, want a few", argChunks)
	}
}

func TestTurnsInOrderThenExhausted(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Text: "one"}, {Text: "two"}}})
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("base URL %q", url)
	}
	base := strings.TrimSuffix(url, "/v1")
	for i, want := range []string{"one", "two", ExhaustedText, ExhaustedText} {
		body := `{"stream":true,"n":` + string(rune('0'+i)) + `}`
		_, datas := post(t, base, body)
		if got := TextOf(strings.Join(prefix(datas), "\n")); got != want {
			t.Errorf("request %d: %q, want %q", i, got, want)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 4 || string(reqs[2]) != `{"stream":true,"n":2}` {
		t.Errorf("requests %q", reqs)
	}

	rep := New(Script{Turns: []Turn{{Text: "a"}, {Text: "b"}}, RepeatLast: true})
	ts := httptest.NewServer(rep.Handler())
	defer ts.Close()
	for i, want := range []string{"a", "b", "b"} {
		_, datas := post(t, ts.URL, `{"stream":true}`)
		if got := TextOf(strings.Join(prefix(datas), "\n")); got != want {
			t.Errorf("repeat request %d: %q, want %q", i, got, want)
		}
	}
}

func TestRoutesDoNotUseUpTurns(t *testing.T) {
	srv := New(Script{
		Turns:  []Turn{{Text: "one"}, {Text: "two"}},
		Routes: []Route{{Match: "You name coding conversations", Turn: Turn{Text: "A title"}}},
	})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	bodies := []string{
		`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		`{"stream":true,"messages":[{"role":"system","content":"You name coding conversations."}]}`,
		`{"stream":true,"messages":[{"role":"user","content":"more"}]}`,
		`{"stream":true,"messages":[{"role":"system","content":"You name coding conversations."}]}`,
	}
	for i, want := range []string{"one", "A title", "two", "A title"} {
		_, datas := post(t, ts.URL, bodies[i])
		if got := TextOf(strings.Join(prefix(datas), "\n")); got != want {
			t.Errorf("request %d: %q, want %q", i, got, want)
		}
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("recorded %d requests, want 4", n)
	}
	if _, err := ParseScript([]byte(`{"routes":[{"turn":{"text":"x"}}]}`)); err == nil {
		t.Error("route without match accepted")
	}
}

func TestModels(t *testing.T) {
	ts := httptest.NewServer(New(Script{}).Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Object string `json:"object"`
		Data   []struct{ ID, Object string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != "fake-model" || list.Data[0].Object != "model" {
		t.Errorf("models %+v", list)
	}
}

func TestNonStreamingAndErrors(t *testing.T) {
	srv := New(Script{Turns: []Turn{
		{Text: "whole", ToolCalls: []ToolCall{{Name: "list_dir", Arguments: json.RawMessage(`{}`)}}},
		{Status: 429, Headers: map[string]string{"retry-after": "2"}},
	}})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":false}`))
	if err != nil {
		t.Fatal(err)
	}
	var whole struct {
		Object  string
		Choices []struct {
			Message struct {
				Content   string
				ToolCalls []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&whole)
	resp.Body.Close()
	if whole.Object != "chat.completion" || whole.Choices[0].Message.Content != "whole" ||
		whole.Choices[0].Message.ToolCalls[0].Function.Name != "list_dir" || whole.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("non-streaming reply %+v", whole)
	}

	resp, err = http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || !strings.Contains(string(b), `"error"`) {
		t.Errorf("scripted error: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}

	resp, err = http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`not json`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("bad body answered %d", resp.StatusCode)
	}
}

// TestCancelStopsStream checks that a client hanging up mid-stream ends the
// server's writing well before the scripted stream would have finished.
func TestCancelStopsStream(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Text: strings.Repeat("x", 4000), ChunkSize: 1, ChunkDelayMs: 10}}})
	ended := make(chan bool, 1)
	srv.streamEnded = func(complete bool) { ended <- complete }
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions", strings.NewReader(streamReq))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	for n := 0; n < 3; {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			n++
		}
	}
	cancel()
	resp.Body.Close()
	// Counted by outcome, not timed: the stream ends incomplete, well before its 40 s.
	select {
	case complete := <-ended:
		if complete {
			t.Error("stream ran to completion after the client left")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("stream never ended after the client left (full stream takes 40 s)")
	}
}

func TestWaitRequests(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Text: "a"}}})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	go func() {
		if resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`)); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reqs, err := srv.WaitRequests(ctx, 1)
	if err != nil || len(reqs) != 1 {
		t.Fatalf("WaitRequests: %v %d", err, len(reqs))
	}
}

func TestParseScript(t *testing.T) {
	s, err := ParseScript([]byte(`{"turns":[{"reasoning":"r","text":"t","toolCalls":[{"name":"read_file","arguments":{"path":"a.txt"}}],"chunkDelayMs":20,"chunkSize":4}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Turns[0].ToolCalls[0].argumentsText(); got != `{"path":"a.txt"}` || s.Turns[0].ChunkDelayMs != 20 {
		t.Errorf("parsed %+v args %s", s, got)
	}
	if _, err := ParseScript([]byte(`{"turns":[{"txt":"typo"}]}`)); err == nil {
		t.Error("unknown field accepted")
	}
	if _, err := ParseScript([]byte(`{"turns":[{"toolCalls":[{}]}]}`)); err == nil {
		t.Error("nameless tool call accepted")
	}
}

// ArgsChunkSize streams a tool call's arguments in pieces of that many runes, which is how the
// benchmark driver streams a large argument.
func TestArgsChunkSize(t *testing.T) {
	args := `{"path":"b.txt","content":"` + strings.Repeat("é", 20) + `"}`
	srv := New(Script{Turns: []Turn{{ArgsChunkSize: 5, ToolCalls: []ToolCall{{Name: "create_file", Arguments: json.RawMessage(args)}}}}})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	_, datas := post(t, ts.URL, `{"stream":true,"messages":[]}`)
	var got strings.Builder
	pieces := 0
	for _, d := range datas[:len(datas)-1] {
		for _, ch := range decode(t, d).Choices {
			for _, tc := range ch.Delta.ToolCalls {
				if a := tc.Function.Arguments; a != nil && *a != "" {
					pieces++
					if n := len([]rune(*a)); n > 5 {
						t.Errorf("a piece of %d runes: %q", n, *a)
					}
					got.WriteString(*a)
				}
			}
		}
	}
	if got.String() != args {
		t.Errorf("arguments = %q, want %q", got.String(), args)
	}
	if want := (len([]rune(args)) + 4) / 5; pieces != want {
		t.Errorf("%d pieces, want %d", pieces, want)
	}
}

// A replay script runs on the server unchanged: the demo's script parses, and its spellings
// (responses, thinking, args, stopReason, error, title, summary) mean here what they mean there.
func TestReplayScriptFormat(t *testing.T) {
	demo, err := os.ReadFile("../../../testdata/demo/replay.json")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := ParseScript(demo)
	if err != nil {
		t.Fatalf("the demo's replay script: %v", err)
	}
	if len(ds.Turns) == 0 || len(ds.Turns[0].ToolCalls) == 0 || len(ds.Turns[0].ToolCalls[0].Arguments) == 0 {
		t.Fatalf("demo script folded to %+v", ds.Turns)
	}

	s, err := ParseScript([]byte(`{"title": "A title", "summary": "A summary", "chunkDelayMs": 1, "responses": [
		{"thinking": "hm", "toolCalls": [{"id": "c1", "name": "read_file", "args": {"path": "a.txt"}}], "stopReason": "tool_use", "usage": {"input": 1}},
		{"text": "cut", "stopReason": "max_tokens"},
		{"error": {"kind": "context_overflow", "message": "too long"}}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(s).Handler())
	defer ts.Close()
	_, datas := post(t, ts.URL, `{"stream":true,"messages":[]}`)
	var reasoning, args string
	for _, d := range datas[:len(datas)-1] {
		for _, ch := range decode(t, d).Choices {
			if r := ch.Delta.ReasoningContent; r != nil {
				reasoning += *r
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Arguments != nil {
					args += *tc.Function.Arguments
				}
			}
		}
	}
	if reasoning != "hm" || args != `{"path":"a.txt"}` {
		t.Errorf("turn 1: reasoning %q, arguments %q", reasoning, args)
	}
	_, datas = post(t, ts.URL, `{"stream":true,"messages":[]}`)
	if !strings.Contains(strings.Join(datas, "\n"), `"finish_reason":"length"`) {
		t.Errorf("max_tokens did not become finish_reason length: %v", datas)
	}
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "context_length_exceeded") || !strings.Contains(string(body), "too long") {
		t.Errorf("error turn: %d %s", resp.StatusCode, body)
	}
	// Title and summary requests are answered by routes, without using up a turn.
	for system, want := range map[string]string{"You name coding conversations.": "A title", "You write compact, faithful summaries of coding-agent conversations.": "A summary"} {
		_, datas = post(t, ts.URL, `{"stream":true,"messages":[{"role":"system","content":"`+system+`"}]}`)
		if got := TextOf("data: " + strings.Join(datas, "\n\ndata: ")); got != want {
			t.Errorf("%q answered %q, want %q", system, got, want)
		}
	}
	for _, bad := range []string{`{"responses":[{"error":{"kind":"bogus"}}]}`, `{"responses":[{"stopReason":"later"}]}`, `{"responses":[{"texts":"x"}]}`} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

// onToolError branches on the outcome of the calls before: played when the request ends with a
// tool result that reports a failure, the turn itself otherwise.
func TestOnToolError(t *testing.T) {
	s, err := ParseScript([]byte(`{"responses": [{"text": "Fixed it.", "onToolError": {"text": "The edit was refused."}}], "repeatLast": true}`))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(s).Handler())
	defer ts.Close()
	for _, tc := range []struct{ messages, want string }{
		{`[{"role":"tool","tool_call_id":"c1","content":"Error: the user refused"}]`, "The edit was refused."},
		{`[{"role":"tool","tool_call_id":"c1","content":"ok"},{"role":"tool","tool_call_id":"c2","content":"Error: failed"}]`, "The edit was refused."},
		{`[{"role":"tool","tool_call_id":"c1","content":"Applied."}]`, "Fixed it."},
		{`[{"role":"tool","tool_call_id":"c1","content":"Error: old"},{"role":"user","content":"go on"}]`, "Fixed it."},
	} {
		_, datas := post(t, ts.URL, `{"stream":true,"messages":`+tc.messages+`}`)
		if got := TextOf("data: " + strings.Join(datas, "\n\ndata: ")); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.messages, got, tc.want)
		}
	}
}

func TestEmbeddingsAnswerOutOfOrderWithIndexes(t *testing.T) {
	s := New(Script{Turns: []Turn{{Text: "kept"}}})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/embeddings", "application/json", strings.NewReader(`{"model":"e","input":["alpha words","bravo words"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if len(out.Data) != 2 || out.Data[0].Index != 1 || out.Data[1].Index != 0 || len(out.Data[0].Embedding) != EmbeddingDim {
		t.Fatalf("data %+v", out.Data)
	}
	if s.EmbeddedTexts() != 2 || len(s.Requests()) != 0 {
		t.Fatalf("embedded %d, chat requests %d: embeddings must not use up turns", s.EmbeddedTexts(), len(s.Requests()))
	}
	resp2, _ := http.Post(srv.URL+"/v1/embeddings", "application/json", strings.NewReader(`{"input":"x"}`))
	if resp2.StatusCode != 400 {
		t.Fatalf("status %d for a bad request", resp2.StatusCode)
	}
	resp2.Body.Close()
}

// A turn's replay usage is what its usage chunk reports, cache reads inside prompt_tokens as
// OpenAI counts them.
func TestStreamReportsScriptedUsage(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Text: "ok", Usage: json.RawMessage(`{"input":1000,"output":200,"cacheRead":3000,"cacheWrite":400}`)}}})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	_, datas := post(t, ts.URL, streamReq)
	u := decode(t, datas[len(datas)-2]).Usage
	if u == nil || u.PromptTokens != 4000 || u.CompletionTokens != 200 || u.TotalTokens != 4200 || u.PromptTokensDetails == nil ||
		u.PromptTokensDetails.CachedTokens != 3000 || u.PromptTokensDetails.CacheWriteTokens != 400 {
		t.Fatalf("usage chunk %s", datas[len(datas)-2])
	}
}

func TestFIMCompletions(t *testing.T) {
	srv := New(Script{FIM: &FIMScript{Rules: []FIMRule{{After: "func add(a, b int) int {\n\t", Text: "return a + b"}}, Default: "x"}})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	post := func(prompt string) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"model": ModelID, "prompt": prompt, "suffix": "\n}\n", "max_tokens": 64, "stream": false})
		resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Object  string `json:"object"`
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Object != "text_completion" || len(out.Choices) != 1 {
			t.Fatalf("answer %+v, %v", out, err)
		}
		return out.Choices[0].Text
	}
	if got := post("package p\n\nfunc add(a, b int) int {\n\t"); got != "return a + b" {
		t.Errorf("matched rule: got %q", got)
	}
	if got := post("nothing"); got != "x" {
		t.Errorf("default: got %q", got)
	}
	if st := srv.FIMStats(); st.Requests != 2 || st.Completed != 2 || st.MaxInFlight != 1 {
		t.Errorf("stats %+v", st)
	}
}

// A client that cancels its request (closing the connection) and at once sends the next has one
// request in flight, however late the server's handler notices the close; two requests left
// open are two.
func TestFIMInFlightCountsWhatTheClientStillWaitsFor(t *testing.T) {
	srv := New(Script{FIM: &FIMScript{Default: "x", DelayMs: 2000}})
	base, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	body := `{"model":"m","prompt":"a","suffix":"","max_tokens":8,"stream":false}`
	// Each request on its own client, so none reuses another's connection.
	send := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/completions", strings.NewReader(body))
		c := &http.Client{Transport: &http.Transport{}}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	waitRequests := func(n int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for srv.FIMStats().Requests < n {
			if time.Now().After(deadline) {
				t.Fatalf("the server saw %d requests, want %d", srv.FIMStats().Requests, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- send(ctx) }()
		waitRequests(i + 1)
		cancel()
		<-done // the transport has closed the connection
	}
	if st := srv.FIMStats(); st.MaxInFlight != 1 {
		t.Errorf("cancel-then-send: %d in flight at most, want 1 (%+v)", st.MaxInFlight, st)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- send(ctx) }()
	waitRequests(21)
	go func() { errs <- send(ctx) }()
	waitRequests(22)
	if st := srv.FIMStats(); st.MaxInFlight != 2 {
		t.Errorf("two requests left open: %d in flight at most, want 2", st.MaxInFlight)
	}
	cancel()
	<-errs
	<-errs
}
