package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/anthropic"
	"github.com/agentd-dev/agentd/providers/providertest"
)

func goldenPath(t *testing.T, name string) string {
	return filepath.Join(providertest.RepoRoot(t), "testdata", "providers", "anthropic", "golden", name)
}

var weatherSchema = json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)

// conversation is a second turn after a thinking tool call: it exercises tools, tool results
// (one an error), a thinking signature and a redacted block sent back, an image and every cache
// breakpoint.
func conversation() *providers.Request {
	temp := 0.2
	return &providers.Request{
		Model:     "claude-sonnet-4-5",
		System:    "You are a coding agent.",
		Context:   "Open files: main.go",
		MaxTokens: 2048,
		Tools: []providers.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "weather", Description: "Weather for a place.", Schema: weatherSchema},
		},
		Temperature: &temp,
		Messages: []providers.Message{
			{Role: providers.RoleUser, Parts: []providers.Part{
				{Type: providers.PartText, Text: "What is in main.go, and the weather in Florence?"},
				{Type: providers.PartImage, MimeType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
			}},
			{Role: providers.RoleAssistant, Parts: []providers.Part{
				{Type: providers.PartThinking, Text: "I should read the file and check the weather.", Signature: "EqQBCgIYAhIM"},
				{Type: providers.PartThinking, Redacted: "EmwKAhgBEgy3va3pzix"},
				{Type: providers.PartThinking, Text: "unsigned thoughts from another provider are dropped"},
				{Type: providers.PartText, Text: ""},
				{Type: providers.PartToolCall, ToolCallID: "toolu_1", ToolName: "read_file", Args: json.RawMessage(`{"path":"main.go"}`)},
				{Type: providers.PartToolCall, ToolCallID: "toolu_2", ToolName: "weather", Args: json.RawMessage(`{"location":"Florence, Italy"}`)},
			}},
			{Role: providers.RoleUser, Parts: []providers.Part{
				{Type: providers.PartToolResult, ToolCallID: "toolu_1", ToolName: "read_file", Text: "package main\n"},
				{Type: providers.PartToolResult, ToolCallID: "toolu_2", ToolName: "weather", Text: "service unavailable", IsError: true},
			}},
		},
	}
}

func TestRequestGolden(t *testing.T) {
	t.Run("tools_results_signatures_cache", func(t *testing.T) {
		b, err := anthropic.BuildRequest(conversation(), "")
		if err != nil {
			t.Fatal(err)
		}
		providertest.Golden(t, goldenPath(t, "request_tools_cache.json"), b)
	})
	t.Run("thinking_budget", func(t *testing.T) {
		r := conversation()
		r.Thinking = providers.Thinking{Enabled: true, BudgetTokens: 3000}
		b, err := anthropic.BuildRequest(r, "")
		if err != nil {
			t.Fatal(err)
		}
		providertest.Golden(t, goldenPath(t, "request_thinking.json"), b)
	})
	// A tool result's images are image blocks after the tool_result blocks.
	t.Run("tool_result_images", func(t *testing.T) {
		b, err := anthropic.BuildRequest(&providers.Request{Messages: providertest.ToolImages()}, "claude-sonnet-4-5")
		if err != nil {
			t.Fatal(err)
		}
		providertest.Golden(t, goldenPath(t, "request_tool_result_images.json"), b)
	})
	t.Run("minimal", func(t *testing.T) {
		b, err := anthropic.BuildRequest(&providers.Request{Messages: []providers.Message{
			{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "hi"}}},
		}}, "claude-haiku-4-5")
		if err != nil {
			t.Fatal(err)
		}
		providertest.Golden(t, goldenPath(t, "request_minimal.json"), b)
	})
}

func TestThinkingRequestRules(t *testing.T) {
	temp := 0.5
	for _, c := range []struct {
		budget, maxTokens        int
		wantBudget, wantMaxToken int
	}{
		{0, 0, anthropic.DefaultThinkingBudget, anthropic.DefaultMaxTokens},
		{100, 8000, anthropic.MinThinkingBudget, 8000},
		{10000, 4000, 10000, 14000},
	} {
		r := &providers.Request{Model: "m", MaxTokens: c.maxTokens, Temperature: &temp,
			Thinking: providers.Thinking{Enabled: true, BudgetTokens: c.budget}}
		b, err := anthropic.BuildRequest(r, "")
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			MaxTokens   int      `json:"max_tokens"`
			Temperature *float64 `json:"temperature"`
			Thinking    struct {
				Type   string `json:"type"`
				Budget int    `json:"budget_tokens"`
			} `json:"thinking"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Thinking.Type != "enabled" || got.Thinking.Budget != c.wantBudget || got.MaxTokens != c.wantMaxToken || got.Temperature != nil {
			t.Errorf("budget %d max %d: got %s", c.budget, c.maxTokens, b)
		}
	}
	if _, err := anthropic.BuildRequest(&providers.Request{}, ""); err == nil {
		t.Error("a request without a model was accepted")
	}
}

func TestHeadersAndURL(t *testing.T) {
	dir := filepath.Join(providertest.RepoRoot(t), "testdata", "providers", "anthropic")
	for _, c := range []struct {
		name     string
		key      string
		thinking bool
		tools    bool
		beta     string
	}{
		{"key and interleaved thinking", "sk-ant-1", true, true, anthropic.InterleavedThinkingBeta},
		{"thinking without tools", "sk-ant-1", true, false, ""},
		{"no key", "", false, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &providers.Request{Model: "m", Thinking: providers.Thinking{Enabled: c.thinking},
				Messages: []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "hi"}}}}}
			if c.tools {
				r.Tools = []providers.ToolSpec{{Name: "weather", Schema: weatherSchema}}
			}
			c2 := providers.Config{APIKey: c.key, Headers: map[string]string{"X-Extra": "1"}}
			o, srv, _ := providertest.Replay(t, newAnthropic, c2, filepath.Join(dir, "text.sse"), r)
			if o.Stop != providers.StopEndTurn {
				t.Fatalf("stop = %q err = %+v", o.Stop, o.Err)
			}
			ex := srv.Requests()[0]
			h := ex.Header
			if ex.Method != "POST" || ex.Path != "/v1/messages" {
				t.Errorf("request = %s %s", ex.Method, ex.Path)
			}
			if _, has := h["X-Api-Key"]; has != (c.key != "") || h.Get("X-Api-Key") != c.key {
				t.Errorf("x-api-key = %q, want %q", h.Get("X-Api-Key"), c.key)
			}
			if h.Get("Anthropic-Version") != anthropic.APIVersion || h.Get("X-Extra") != "1" || h.Get("Anthropic-Beta") != c.beta {
				t.Errorf("headers = %v", h)
			}
			if !json.Valid(ex.Body) || !strings.Contains(string(ex.Body), `"stream":true`) {
				t.Errorf("body = %s", ex.Body)
			}
		})
	}
}

func TestBaseURLForms(t *testing.T) {
	srv := providertest.ServeResponse(t, 200, http.Header{"Content-Type": {"application/json"}}, []byte(`{"data":[]}`))
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/v1"} {
		p, err := anthropic.NewWithTransport(providers.Config{BaseURL: base}, providertest.Transport(&providertest.Sleeps{}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.(providers.ModelLister).ListModels(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, ex := range srv.Requests() {
		if ex.Path != "/v1/models?limit=1000" {
			t.Errorf("path = %s", ex.Path)
		}
	}
}

func TestListModelsFollowsPages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != "sk" || r.URL.Path != "/v1/models" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		if r.URL.Query().Get("after_id") == "" {
			fmt.Fprint(w, `{"data":[{"id":"claude-opus-4-6","type":"model"},{"id":"claude-sonnet-4-5","type":"model"}],"has_more":true,"last_id":"claude-sonnet-4-5"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":"claude-haiku-4-5","type":"model"}],"has_more":false,"last_id":"claude-haiku-4-5"}`)
	}))
	defer srv.Close()
	p, _ := anthropic.NewWithTransport(providers.Config{BaseURL: srv.URL, APIKey: "sk"}, providertest.Transport(&providertest.Sleeps{}))
	got, err := p.(providers.ModelLister).ListModels(context.Background())
	if err != nil || fmt.Sprint(got) != "[claude-opus-4-6 claude-sonnet-4-5 claude-haiku-4-5]" {
		t.Fatalf("models = %v err = %v", got, err)
	}
	p, _ = anthropic.NewWithTransport(providers.Config{BaseURL: srv.URL, APIKey: "bad"}, providertest.Transport(&providertest.Sleeps{}))
	_, err = p.(providers.ModelLister).ListModels(context.Background())
	var pe *providers.Error
	if !asError(err, &pe) || pe.Kind != providers.ErrAuth {
		t.Fatalf("err = %v", err)
	}
}

func asError(err error, target **providers.Error) bool {
	pe, ok := err.(*providers.Error)
	*target = pe
	return ok && pe != nil
}

// slowStream sends one text delta, then holds the connection until the client hangs up.
func slowStream(t *testing.T) (*httptest.Server, *providertest.HangUp) {
	h := providertest.NewHangUp()
	srv := httptest.NewServer(h.Handler("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"))
	t.Cleanup(srv.Close)
	return srv, h
}

func TestCancelEndsWithCancelledAndClosesTheSocket(t *testing.T) {
	srv, hangUp := slowStream(t)
	p, _ := anthropic.NewWithTransport(providers.Config{BaseURL: srv.URL, Model: "m"}, providertest.Transport(&providertest.Sleeps{}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var types []providers.EventType
	var last providers.Event
	for ev := range p.Stream(ctx, req) {
		types = append(types, ev.Type)
		last = ev
		if ev.Type == providers.EventTextDelta {
			cancel()
		}
	}
	if last.Type != providers.EventFailed || last.Err.Kind != providers.ErrCancelled {
		t.Fatalf("events %v, last %+v", types, last)
	}
	hangUp.Wait(t)
}

func TestBreakClosesTheSocket(t *testing.T) {
	srv, hangUp := slowStream(t)
	p, _ := anthropic.NewWithTransport(providers.Config{BaseURL: srv.URL, Model: "m"}, providertest.Transport(&providertest.Sleeps{}))
	for ev := range p.Stream(context.Background(), req) {
		if ev.Type == providers.EventTextDelta {
			break
		}
	}
	hangUp.Wait(t)
}

func TestRetryNoticesReachTheStream(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("retry-after", "8")
			w.WriteHeader(429)
			fmt.Fprint(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer srv.Close()
	sl := &providertest.Sleeps{}
	p, _ := anthropic.NewWithTransport(providers.Config{BaseURL: srv.URL, Model: "m"}, providertest.Transport(sl))
	o := providertest.Collect(t, p.Stream(context.Background(), req))
	if o.Stop != providers.StopEndTurn || fmt.Sprint(o.Notices) != "[rate limited, retrying in 8 s]" || fmt.Sprint(sl.All()) != "[8s]" {
		t.Fatalf("outcome %+v sleeps %v", o, sl.All())
	}
}

// TestEventOverGoSSEDefaultLimit streams a 100 KiB text delta: go-sse's default 64 KiB limit
// would fail it, the transport's raised limit does not.
func TestEventOverGoSSEDefaultLimit(t *testing.T) {
	big := strings.Repeat("é", 50<<10) // 100 KiB of UTF-8
	body := "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + big + "\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	srv := providertest.ServeResponse(t, 200, http.Header{"Content-Type": {"text/event-stream"}}, []byte(body))
	p, _ := anthropic.NewWithTransport(providers.Config{BaseURL: srv.URL, Model: "m"}, providertest.Transport(&providertest.Sleeps{}))
	o := providertest.Collect(t, p.Stream(context.Background(), req))
	if o.Stop != providers.StopEndTurn || o.Text != big {
		t.Fatalf("stop %q, %d bytes of text, err %+v", o.Stop, len(o.Text), o.Err)
	}
}

func TestDefaultBaseURL(t *testing.T) {
	var got []string
	p, err := anthropic.NewWithTransport(providers.Config{Model: "m"}, providertest.Offline(&got))
	if err != nil {
		t.Fatal(err)
	}
	o := providertest.Collect(t, p.Stream(context.Background(), req))
	if len(got) != 1 || got[0] != "https://api.anthropic.com/v1/messages" || o.ErrKind() != providers.ErrNetwork {
		t.Fatalf("urls %q outcome %+v", got, o.Err)
	}
	if _, err := anthropic.New(providers.Config{}); err != nil {
		t.Fatal(err)
	}
}

func TestMessageStopClosesOpenToolBlocks(t *testing.T) {
	start := "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"ls\",\"input\":{}}}\n\n"
	delta := func(s string) string {
		b, _ := json.Marshal(s)
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":" + string(b) + "}}\n\n"
	}
	end := "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	for _, c := range []struct {
		args string
		kind providers.ErrorKind
	}{{`{"path": "."}`, ""}, {`{"path": `, providers.ErrServer}} {
		srv := providertest.ServeResponse(t, 200, http.Header{"Content-Type": {"text/event-stream"}}, []byte(start+delta(c.args)+end))
		p, _ := anthropic.NewWithTransport(providers.Config{BaseURL: srv.URL, Model: "m"}, providertest.Transport(&providertest.Sleeps{}))
		o := providertest.Collect(t, p.Stream(context.Background(), req))
		if o.ErrKind() != c.kind || c.kind == "" && (len(o.ToolCalls) != 1 || o.ToolCalls[0].RawArgs != c.args || o.Stop != providers.StopToolUse) {
			t.Errorf("%s: %s", c.args, providertest.Dump(o.Events))
		}
	}
}

// TestRequestToolsFollowTheToolSet: the tools of a body are the request's own whichever tool set
// was sent before (they are encoded once per tool set and kept).
func TestRequestToolsFollowTheToolSet(t *testing.T) {
	first, err := anthropic.BuildRequest(conversation(), "")
	if err != nil {
		t.Fatal(err)
	}
	other := conversation()
	other.Tools = append([]providers.ToolSpec(nil), other.Tools...)
	other.Tools[0].Description = "Weather for a place, in kelvin."
	changed, err := anthropic.BuildRequest(other, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(changed), "in kelvin") {
		t.Fatalf("a changed description is missing: %s", changed)
	}
	again, err := anthropic.BuildRequest(conversation(), "")
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(first) {
		t.Fatalf("the first tool set again:\n got %s\nwant %s", again, first)
	}
}

// breakpoints lists the blocks of a /v1/messages body that carry cache_control, as
// "tools[i]", "system[i]" or "messages[i][j]".
func breakpoints(t *testing.T, body []byte) []string {
	t.Helper()
	var r struct {
		Tools, System []map[string]json.RawMessage
		Messages      []struct{ Content []map[string]json.RawMessage }
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, b := range r.Tools {
		if b["cache_control"] != nil {
			out = append(out, fmt.Sprintf("tools[%d]", i))
		}
	}
	for i, b := range r.System {
		if b["cache_control"] != nil {
			out = append(out, fmt.Sprintf("system[%d]", i))
		}
	}
	for i, m := range r.Messages {
		for j, b := range m.Content {
			if b["cache_control"] != nil {
				out = append(out, fmt.Sprintf("messages[%d][%d]", i, j))
			}
		}
	}
	return out
}

// Request.Stable puts the fourth breakpoint at the end of the messages the next requests send
// unchanged; a value the messages do not have, or one that adds nothing, adds no breakpoint,
// and a request never carries more than the API's four.
func TestStableBreakpoint(t *testing.T) {
	text := func(s string) providers.Part { return providers.Part{Type: providers.PartText, Text: s} }
	msgs := []providers.Message{
		{Role: providers.RoleUser, Parts: []providers.Part{text("read a.go")}},
		{Role: providers.RoleAssistant, Parts: []providers.Part{text("reading"), {Type: providers.PartToolCall, ToolCallID: "t1", ToolName: "read_file", Args: json.RawMessage(`{}`)}}},
		{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartToolResult, ToolCallID: "t1", Text: "package a"}}},
		// Encodes to nothing (empty text; unsigned thinking): skipped by the encoder.
		{Role: providers.RoleAssistant, Parts: []providers.Part{text(""), {Type: providers.PartThinking, Text: "unsigned"}}},
		{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartThinking, Text: "signed", Signature: "sig"}, text("done")}},
		{Role: providers.RoleUser, Parts: []providers.Part{text("thanks")}},
	}
	base := []string{"tools[0]", "system[0]"}
	for _, c := range []struct {
		stable int
		want   []string
	}{
		{0, []string{"messages[4][0]"}},
		{-3, []string{"messages[4][0]"}},
		{2, []string{"messages[1][1]", "messages[4][0]"}},
		{3, []string{"messages[2][0]", "messages[4][0]"}},
		// Message 3 encodes to nothing: the breakpoint goes on the message before it.
		{4, []string{"messages[2][0]", "messages[4][0]"}},
		// Message 4's last block is text after signed thinking.
		{5, []string{"messages[3][1]", "messages[4][0]"}},
		{6, []string{"messages[4][0]"}},
		{7, []string{"messages[4][0]"}},
		{1 << 40, []string{"messages[4][0]"}},
	} {
		req := &providers.Request{System: "sys", Context: "live", Messages: msgs, Stable: c.stable,
			Tools: []providers.ToolSpec{{Name: "read_file", Schema: weatherSchema}}}
		b, err := anthropic.BuildRequest(req, "claude-sonnet-4-5")
		if err != nil {
			t.Fatal(err)
		}
		got := breakpoints(t, b)
		if want := append(append([]string(nil), base...), c.want...); !slices.Equal(got, want) {
			t.Errorf("Stable %d: breakpoints %q, want %q", c.stable, got, want)
		}
		if len(got) > 4 {
			t.Errorf("Stable %d: %d breakpoints, the API takes 4", c.stable, len(got))
		}
	}
}
