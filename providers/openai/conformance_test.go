package openai

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/agentd-dev/agentd/providers/providertest"
)

// newTest builds a provider; each has its own memo of server quirks, so tests that reuse a port
// (httptest picks them) never inherit each other's discoveries.
func newTest(cfg providers.Config, tr *httpsse.Transport) (providers.Provider, error) {
	return newProvider(cfg, tr)
}

var testCfg = providers.Config{ID: "test", APIType: "openai", Model: "gpt-4o", APIKey: "sk-test"}

// testRequest is the request every recorded stream is replayed for: a tool and a token limit, so
// the retries on refused parameters are exercised by the error recordings too.
func testRequest() *providers.Request {
	return &providers.Request{
		System:    "You are terse.",
		Messages:  []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "Hi"}}}},
		Tools:     []providers.ToolSpec{{Name: "weather", Description: "Weather for a place.", Schema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}},
		MaxTokens: 1024,
	}
}

func usage(in, out, cacheRead, thinking int) *providers.Usage {
	return &providers.Usage{Input: in, Output: out, CacheRead: cacheRead, Thinking: thinking}
}

// TestSharedOpenAIFixtures asserts the outcome the fixtures README states for every file in
// ../shared/fixtures/providers/openai.
func TestSharedOpenAIFixtures(t *testing.T) {
	dir := providertest.SharedFixtures(t, "openai")
	providertest.Run(t, dir, newTest, testCfg, testRequest(), []providertest.Case{
		{File: "text_usage_chunk.sse", Want: providertest.Expect{
			Text: "Olá!", Stop: providers.StopEndTurn, Usage: usage(20, 2, 0, 0)}},
		{File: "tool_call_args_split.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{{Name: "write", ID: "call_MqgU2oanL8jcyDZxTkMMo64j",
				Args: `{"file_path":"/tmp/crush-test/TestCoderAgent/openai-gpt-5/write_tool/config.json","content":"{\"name\": \"test\", \"version\": \"1.0.0\"}"}`}},
			Stop: providers.StopToolUse, Usage: usage(6393-3456, 316, 3456, 256)}},
		{File: "parallel_tool_calls.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{
				{Name: "add", ID: "call_ehIWdjL1abZk1h8FWGLQ0Hie", Args: `{"a": 2, "b": 3}`},
				{Name: "multiply", ID: "call_fBSgA47J5VeONggizTIvl7AH", Args: `{"a": 2, "b": 3}`},
			},
			Stop: providers.StopToolUse, Usage: usage(106, 50, 0, 0)}},
		{File: "finish_reason_length.sse", Want: providertest.Expect{
			Stop: providers.StopMaxTokens, Usage: usage(12, 100, 0, 100)}},
		{File: "refusal.sse", Want: providertest.Expect{
			Text: "I'm sorry, but I can't assist with that request.", Stop: providers.StopRefusal,
			Usage: &providers.Usage{}}},
		{File: "error_429_insufficient_quota.http", Want: providertest.Expect{
			ErrKind: providers.ErrQuota, ErrContains: "exceeded your current quota"}},
		// Retryable: the transport retries three times (sleeps recorded, not waited), announcing
		// each retry with a notice, then gives up.
		{File: "error_429_rate_limit.http", Want: providertest.Expect{
			ErrKind: providers.ErrRateLimit, ErrContains: "Rate limit reached", RequestID: "df4093761753468e57c467fd3774f9ad", Notices: 3}},
		// max_tokens is swapped for max_completion_tokens once; the recording refuses again.
		{File: "error_400_max_tokens_unsupported.http", Want: providertest.Expect{
			ErrKind: providers.ErrInvalidRequest, ErrContains: "max_completion_tokens", RequestID: "req_13d9b359dc234adc87be3833cacab1c6"}},
		{File: "error_400_temperature_unsupported_value.http", Want: providertest.Expect{
			ErrKind: providers.ErrInvalidRequest, ErrContains: "Only the default (1) value is supported"}},
		{File: "error_400_temperature_unsupported_parameter.http", Want: providertest.Expect{
			ErrKind: providers.ErrInvalidRequest, ErrContains: "'temperature' is not supported"}},
	})
}

// TestSharedOpenAICompatibleFixtures does the same for ../shared/fixtures/providers/openai-compatible.
func TestSharedOpenAICompatibleFixtures(t *testing.T) {
	dir := providertest.SharedFixtures(t, "openai-compatible")
	providertest.Run(t, dir, newTest, testCfg, testRequest(), []providertest.Case{
		{File: "ollama_tool_calls_whole.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{
				{Name: "run_command", ID: "call_wteop8bt", Args: `{"command":"ls"}`},
				{Name: "run_command", ID: "call_rk2xye1l", Args: `{"command":"ls -l"}`},
			},
			Stop: providers.StopToolUse, Usage: &providers.Usage{}}},
		{File: "llamacpp_reasoning_tool_call.sse", Want: providertest.Expect{
			Thinking:  "User wants weather in Florence, Italy. We can use the weather function.",
			ToolCalls: []providertest.Call{{Name: "weather", ID: "g2KOIWzn722hzEaZQmNVP4roUPEiYafL", Args: `{"location":"Florence, Italy"}`}},
			Stop:      providers.StopToolUse, Usage: usage(139, 41, 0, 0)}},
		{File: "openrouter_reasoning_details_tool_call.sse", Want: providertest.Expect{
			ThinkingPrefix: "The user is asking for weather information in Florence, Italy. I have access to",
			ThinkingLen:    388, Signed: true,
			ToolCalls: []providertest.Call{{Name: "weather", ID: "toolu_bdrk_01N8hD5cYDw4WfvnjKXAkA2W", Args: `{"location": "Florence, Italy"}`}},
			Stop:      providers.StopToolUse, Usage: usage(607, 143, 0, 99)}},
		// Policy: an in-band error fails the stream even after finish_reason "length".
		{File: "openrouter_midstream_error_after_length.sse", Want: providertest.Expect{
			Thinking: "We need to respond to a greeting. The user",
			ErrKind:  providers.ErrInvalidRequest, ErrContains: "Token limit reached",
			Usage: usage(43, 10, 0, 11)}},
		{File: "openrouter_error_429_upstream.http", Want: providertest.Expect{
			ErrKind: providers.ErrRateLimit, ErrContains: "Google", Notices: 3}},
		{File: "deepseek_reasoning_content.sse", Want: providertest.Expect{
			ThinkingPrefix: "Hmm, the user just said \"Hello\"", ThinkingLen: 882,
			Text: "Hello there! 😊 How can I help you today?",
			Stop: providers.StopEndTurn, Usage: usage(6, 212, 0, 198)}},
		{File: "groq_event_error_tool_use_failed.sse", Want: providertest.Expect{
			ThinkingPrefix: "We need to call the tool",
			ErrKind:        providers.ErrInvalidRequest, ErrContains: "Tool call validation failed"}},
		{File: "anthropic_compat_tool_index_starts_at_1.sse", Want: providertest.Expect{
			Text:      "Reading it.",
			ToolCalls: []providertest.Call{{Name: "read_file", ID: "toolu_sanitized", Args: `{"path": "a.txt"}`}},
			Stop:      providers.StopToolUse, Usage: &providers.Usage{}}},
		// Policy: no finish_reason and no [DONE] is a truncated stream.
		{File: "no_done_no_finish_reason.sse", Want: providertest.Expect{
			Text: "Happy, creative day", ErrKind: providers.ErrNetwork, ErrContains: "ended before the response was complete"}},
	})
}

// TestSharedGroqThinkingLength pins the thinking Groq streamed before its error frame (about 412
// characters per the README).
func TestSharedGroqThinkingLength(t *testing.T) {
	dir := providertest.SharedFixtures(t, "openai-compatible")
	o, _, _ := providertest.Replay(t, newTest, testCfg, filepath.Join(dir, "groq_event_error_tool_use_failed.sse"), testRequest())
	if n := len([]rune(o.Thinking)); n < 400 || n > 425 {
		t.Fatalf("thinking has %d runes, want about 412: %q", n, o.Thinking)
	}
	if o.Err == nil || o.Err.Status != 400 {
		t.Fatalf("error = %+v, want status 400 from the frame's status_code", o.Err)
	}
}

// TestOwnFixtures runs the streams written from the documentation (testdata/providers/openai,
// see its README), so the dialect is covered without ../shared.
func TestOwnFixtures(t *testing.T) {
	dir := filepath.Join(providertest.RepoRoot(t), "testdata", "providers", "openai")
	providertest.Run(t, dir, newTest, testCfg, testRequest(), []providertest.Case{
		{File: "text.sse", Want: providertest.Expect{
			Text: "Hello! How can I assist you today?", Stop: providers.StopEndTurn, Usage: usage(9, 9, 0, 0)}},
		{File: "tool_calls.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{
				{Name: "get_weather", ID: "call_DdmO9pD3xa9XTPNJ32zg2hcA", Args: `{"location":"Paris, France"}`},
				{Name: "send_email", ID: "call_Zu0tHZ1m2kLqU7nB1bNrT4xd", Args: `{"to":"bob@email.com","body":"Hi bob\n\tbye"}`},
			},
			Stop: providers.StopToolUse, Usage: usage(81-64, 45, 64, 0)}},
		{File: "reasoning_content.sse", Want: providertest.Expect{
			Thinking: "9.11 has 11 hundredths, 9.8 has 80; so 9.8 is larger.", Text: "9.8 is greater than 9.11.",
			Stop: providers.StopEndTurn, Usage: usage(18, 40, 0, 30)}},
		// Comment lines and CRLF framing; a finish_reason but no [DONE] still completes.
		{File: "comments_crlf_no_done.sse", Want: providertest.Expect{Text: "Hi there", Stop: providers.StopEndTurn}},
		{File: "event_error.sse", Want: providertest.Expect{
			Text: "Partial", ErrKind: providers.ErrServer, ErrContains: "error while processing"}},
		{File: "truncated.sse", Want: providertest.Expect{
			Text: "Hel", ErrKind: providers.ErrNetwork, ErrContains: "ended before the response was complete"}},
		{File: "invalid_json.sse", Want: providertest.Expect{
			Text: "Hi", ErrKind: providers.ErrServer, ErrContains: "invalid JSON"}},
		// A call with no name and one with cut arguments are dropped with a notice each; the
		// call without an id gets a synthesized one.
		{File: "malformed_tool_calls.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{{Name: "list_dir", Args: `{"path": "."}`}},
			Stop:      providers.StopToolUse, Notices: 2}},
		{File: "error_401_invalid_key.http", Want: providertest.Expect{ErrKind: providers.ErrAuth, RequestID: "req_401example"}},
		{File: "error_404_model.http", Want: providertest.Expect{ErrKind: providers.ErrNotFound, ErrContains: "gpt-9"}},
		{File: "error_400_context_length.http", Want: providertest.Expect{ErrKind: providers.ErrContextOverflow, ErrContains: "maximum context length"}},
		{File: "error_500_server.http", Want: providertest.Expect{ErrKind: providers.ErrServer, Notices: 3}},
		{File: "error_502_html_proxy.http", Want: providertest.Expect{ErrKind: providers.ErrServer, ErrContains: "HTML page", Notices: 3}},
		{File: "error_200_json_body.http", Want: providertest.Expect{ErrKind: providers.ErrAuth}},
		// A server refusing tools is reported as such (ToolsRefused, TestServerRefusingTools):
		// the loop goes on with the text tool-call protocol.
		{File: "ollama_no_tools_400.http", Want: providertest.Expect{
			ErrKind: providers.ErrInvalidRequest, ErrContains: "does not support tools"}},
	})
}

// TestDroppedCallIsClosedByItsNotice: the started call whose arguments were cut is reported by a
// notice carrying its id, so a consumer can close it.
func TestDroppedCallIsClosedByItsNotice(t *testing.T) {
	path := filepath.Join(providertest.RepoRoot(t), "testdata", "providers", "openai", "malformed_tool_calls.sse")
	o, _, _ := providertest.Replay(t, newTest, testCfg, path, testRequest())
	if o.DroppedCalls != 1 {
		t.Fatalf("dropped calls = %d, want 1 (call_b); notices %q", o.DroppedCalls, o.Notices)
	}
}
