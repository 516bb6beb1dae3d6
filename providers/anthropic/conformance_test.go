package anthropic_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/anthropic"
	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/agentd-dev/agentd/providers/providertest"
)

func newAnthropic(cfg providers.Config, tr *httpsse.Transport) (providers.Provider, error) {
	return anthropic.NewWithTransport(cfg, tr)
}

var (
	cfg = providers.Config{APIType: "anthropic", Model: "claude-sonnet-4-5", APIKey: "sk-test"}
	req = &providers.Request{
		System:   "You are terse.",
		Messages: []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "hi"}}}},
	}
)

func usage(in, out, read, write int) *providers.Usage {
	return &providers.Usage{Input: in, Output: out, CacheRead: read, CacheWrite: write}
}

// TestSharedRecordings replays every recorded Anthropic stream in ../shared and checks the
// outcome the fixtures' README states.
func TestSharedRecordings(t *testing.T) {
	dir := providertest.SharedFixtures(t, "anthropic")
	providertest.Run(t, dir, newAnthropic, cfg, req, []providertest.Case{
		{File: "text.sse", Want: providertest.Expect{
			Text: "Olá! (That's \"hi\" in Portuguese)\n\nYou could also say \"Oi!\" which is a more casual way to say hi in Portuguese.",
			Stop: providers.StopEndTurn, Usage: usage(16, 38, 0, 0)}},
		{File: "thinking_signature_tool_use.sse", Want: providertest.Expect{
			ThinkingPrefix: "The user is asking for weather information for Florence, Italy.", ThinkingLen: 301, Signed: true,
			ToolCalls: []providertest.Call{{Name: "weather", Args: `{"location": "Florence, Italy"}`, ID: "toolu_01Js4AMfx5qpTLhwTusnvT68"}},
			Stop:      providers.StopToolUse, Usage: usage(424, 119, 0, 0)}},
		{File: "tool_use_input_json_many_chunks.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{{Name: "multiedit", ID: "toolu_01Xe9Mwv1Pkqn26MehAPTikm",
				Args: `{"file_path": "/tmp/crush-test/TestCoderAgent/anthropic-sonnet/multiedit_tool/main.go", "edits": [{"old_string":"\tfmt.Println(\"Hello, World!\")","new_string":"\t// Greeting\n\tfmt.Println(\"Hello, Crush!\")"}]}`}},
			Stop: providers.StopToolUse, Usage: usage(1, 157, 8308, 149)}},
		{File: "multiple_tool_use.sse", Want: providertest.Expect{
			Text: "I'll add and multiply the numbers 2 and 3 for you.",
			ToolCalls: []providertest.Call{
				{Name: "add", Args: `{"a": 2, "b": 3}`, ID: "toolu_01UYxUYC2zRPY8wiutnF48eP"},
				{Name: "multiply", Args: `{"a": 2, "b": 3}`, ID: "toolu_01VaRx1jpWCvPhi7L4kywAcd"},
			},
			Stop: providers.StopToolUse, Usage: usage(502, 137, 0, 0)}},
		{File: "parallel_tool_use_cache_usage.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{
				{Name: "glob", Args: `{"pattern": "**/*.go"}`, ID: "toolu_01QYv5XJsq3fV1NnHGH5qE1j"},
				{Name: "ls", Args: `{"path": "/tmp/crush-test/TestCoderAgent/anthropic-sonnet/parallel_tool_calls"}`, ID: "toolu_01RZ13pSVWhjBKJJQfzAcEmP"},
			},
			Stop: providers.StopToolUse, Usage: usage(3, 110, 3733, 4564)}},
		{File: "redacted_thinking_pings.sse", Want: providertest.Expect{
			TextPrefix: "I notice that you've sent what appears to be some kind of test string", Redacted: 2,
			Stop: providers.StopEndTurn, Usage: usage(92, 189, 0, 0)}},
		{File: "max_tokens.sse", Want: providertest.Expect{Text: "Hello!", Stop: providers.StopMaxTokens, Usage: usage(25, 2, 0, 0)}},
		{File: "stream_error_overloaded.sse", Want: providertest.Expect{
			Text: "Hello", ErrKind: providers.ErrOverloaded, ErrContains: "Overloaded", RequestID: "req_011Ce3HwQb6vtbs9LQVmh4oe"}},
		{File: "stream_error_api_error_fragment.sse", Want: providertest.Expect{
			Text: "d with a replacement character (", ErrKind: providers.ErrServer, ErrContains: "Internal server error"}},
		{File: "error_429_rate_limit.http", Want: providertest.Expect{
			ErrKind: providers.ErrRateLimit, RetryAfter: 27 * time.Second, RequestID: "req_011CZRtHe9vmeRRMu6G4rMhJ",
			ErrContains: "This request would exceed your organization's rate limit of 30,000 input tokens per minute", Notices: 3}},
		{File: "error_529_overloaded.http", Want: providertest.Expect{ErrKind: providers.ErrOverloaded, Notices: 3}},
	})
}

// TestOwnFixtures replays the streams written from Anthropic's documentation, so the dialect is
// covered without ../shared.
func TestOwnFixtures(t *testing.T) {
	dir := filepath.Join(providertest.RepoRoot(t), "testdata", "providers", "anthropic")
	providertest.Run(t, dir, newAnthropic, cfg, req, []providertest.Case{
		{File: "text.sse", Want: providertest.Expect{Text: "Hello!", Stop: providers.StopEndTurn, Usage: usage(25, 15, 0, 0)}},
		{File: "tool_use.sse", Want: providertest.Expect{
			Text:      "Okay, let's check the weather for San Francisco, CA:",
			ToolCalls: []providertest.Call{{Name: "get_weather", ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Args: `{"location": "San Francisco, CA", "unit": "fahrenheit"}`}},
			Stop:      providers.StopToolUse, Usage: usage(472, 89, 0, 0)}},
		{File: "thinking.sse", Want: providertest.Expect{
			Thinking: "I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n1071 = 2 × 462 + 147\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0\n\nSo GCD(1071, 462) = 21",
			Signed:   true, Text: "The greatest common divisor of 1071 and 462 is **21**.", Stop: providers.StopEndTurn}},
		{File: "stream_error_overloaded.sse", Want: providertest.Expect{Text: "Hello", ErrKind: providers.ErrOverloaded}},
		{File: "truncated.sse", Want: providertest.Expect{Text: "Hel", ErrKind: providers.ErrNetwork, ErrContains: "ended before the response was complete"}},
		{File: "invalid_json.sse", Want: providertest.Expect{ErrKind: providers.ErrServer, ErrContains: "malformed stream"}},
		{File: "error_401_auth.http", Want: providertest.Expect{ErrKind: providers.ErrAuth, RequestID: "req_docs_401", ErrContains: "check the key"}},
		{File: "error_400_credit_balance.http", Want: providertest.Expect{ErrKind: providers.ErrQuota, ErrContains: "billing"}},
		{File: "error_400_prompt_too_long.http", Want: providertest.Expect{ErrKind: providers.ErrContextOverflow, ErrContains: "208310 tokens"}},
		{File: "error_404_model.http", Want: providertest.Expect{ErrKind: providers.ErrNotFound, ErrContains: "claude-nope"}},
		{File: "error_403_permission.http", Want: providertest.Expect{ErrKind: providers.ErrPermission}},
		{File: "error_500_api.http", Want: providertest.Expect{ErrKind: providers.ErrServer, Notices: 3}},
		{File: "error_429_retry_after_ms.http", Want: providertest.Expect{ErrKind: providers.ErrRateLimit, RetryAfter: 8 * time.Second, Notices: 3}},
		{File: "error_502_html_proxy.http", Want: providertest.Expect{ErrKind: providers.ErrServer, ErrContains: "HTML page", Notices: 3}},
		{File: "error_200_json_body.http", Want: providertest.Expect{ErrKind: providers.ErrOverloaded, Notices: 3}},
	})
}
