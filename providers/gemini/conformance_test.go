package gemini_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/gemini"
	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/agentd-dev/agentd/providers/providertest"
)

func newGemini(cfg providers.Config, tr *httpsse.Transport) (providers.Provider, error) {
	return gemini.NewWithTransport(cfg, tr)
}

var (
	cfg = providers.Config{APIType: "gemini", Model: "gemini-2.5-flash", APIKey: "AIza-test"}
	req = &providers.Request{
		System:   "You are terse.",
		Messages: []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "hi"}}}},
	}
)

// usage builds the normalized usage from Gemini's raw counts: input without the cached tokens,
// output with the thoughts (as OpenAI counts reasoning), thinking apart.
func usage(prompt, candidates, thoughts, cached int) *providers.Usage {
	return &providers.Usage{Input: prompt - cached, Output: candidates + thoughts, CacheRead: cached, Thinking: thoughts}
}

func numbers(n int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(lines, "\n")
}

// TestSharedRecordings replays every recorded Gemini stream in ../shared and checks the outcome
// the fixtures' README states (usage normalized as documented on usage above).
func TestSharedRecordings(t *testing.T) {
	dir := providertest.SharedFixtures(t, "gemini")
	providertest.Run(t, dir, newGemini, cfg, req, []providertest.Case{
		{File: "text.sse", Want: providertest.Expect{Text: numbers(30), Stop: providers.StopEndTurn, Usage: usage(18, 80, 35, 0)}},
		{File: "thought_and_function_call_signature.sse", Want: providertest.Expect{
			ThinkingPrefix: "**Determining the Weather Inquiry**", ThinkingLen: 327,
			ToolCalls: []providertest.Call{{Name: "weather", Args: `{"location": "Florence, Italy"}`, Signed: true}},
			Stop:      providers.StopToolUse, Usage: usage(54, 14, 62, 0)}},
		{File: "function_call.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{{Name: "weather", Args: `{"location": "Florence,Italy"}`, Signed: true}},
			Stop:      providers.StopToolUse, Usage: usage(54, 15, 43, 0)}},
		{File: "multiple_function_calls_one_candidate.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{{Name: "add", Args: `{"b": 3, "a": 2}`, Signed: true}, {Name: "multiply", Args: `{"a": 2, "b": 3}`}},
			Stop:      providers.StopToolUse, Usage: usage(121, 36, 38, 0)}},
		{File: "multiple_function_calls_gemini3_ids.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{{Name: "add", Args: `{"a": 2, "b": 3}`, ID: "8hd01vsf", Signed: true}, {Name: "multiply", Args: `{"b": 3, "a": 2}`, ID: "k0srpqrc"}},
			Stop:      providers.StopToolUse, Usage: usage(157, 32, 438, 0)}},
		{File: "max_tokens_after_thought.sse", Want: providertest.Expect{
			ThinkingPrefix: "**Initiating the Descent**", ThinkingLen: 367, Text: "We",
			Stop: providers.StopMaxTokens, Usage: usage(29, 0, 59, 0)}},
		{File: "finish_safety.sse", Want: providertest.Expect{Stop: providers.StopRefusal, Usage: usage(2417, 1, 0, 0)}},
		{File: "usage_cached_and_thoughts.sse", Want: providertest.Expect{Text: "Paris.", Stop: providers.StopEndTurn, Usage: usage(3520, 2, 42, 3512)}},
		{File: "prompt_blocked_no_candidates.sse", Want: providertest.Expect{
			ErrKind: providers.ErrContentFilter, ErrContains: "PROHIBITED_CONTENT", Usage: usage(9, 0, 0, 0)}},
		{File: "error_429_resource_exhausted.http", Want: providertest.Expect{
			ErrKind: providers.ErrRateLimit, RetryAfter: 47 * time.Second, ErrContains: "wait 47 s", Notices: 3}},
		{File: "error_400_invalid_argument.http", Want: providertest.Expect{
			ErrKind: providers.ErrInvalidRequest, ErrContains: "Penalty is not enabled for models/gemini-2.5-flash"}},
	})
}

// TestOwnFixtures replays the streams written from the Gemini API documentation, so the dialect
// is covered without ../shared.
func TestOwnFixtures(t *testing.T) {
	dir := filepath.Join(providertest.RepoRoot(t), "testdata", "providers", "gemini")
	providertest.Run(t, dir, newGemini, cfg, req, []providertest.Case{
		{File: "text.sse", Want: providertest.Expect{Text: "The opposite of hot is cold.", Stop: providers.StopEndTurn, Usage: usage(8, 7, 0, 0)}},
		{File: "thinking_text_signature.sse", Want: providertest.Expect{
			Thinking: "**Comparing temperatures**\n\nHot and cold are antonyms.", Signed: true, Text: "Cold.",
			Stop: providers.StopEndTurn, Usage: usage(8, 2, 20, 0)}},
		{File: "parallel_function_calls_ids.sse", Want: providertest.Expect{
			ToolCalls: []providertest.Call{
				{Name: "get_weather", ID: "fc1", Args: `{"location":"Paris"}`, Signed: true},
				{Name: "get_weather", ID: "fc2", Args: `{"location":"London"}`},
			},
			Stop: providers.StopToolUse, Usage: usage(60, 30, 12, 0)}},
		{File: "stream_error_internal.sse", Want: providertest.Expect{Text: "Partial", ErrKind: providers.ErrServer, ErrContains: "internal error"}},
		{File: "truncated.sse", Want: providertest.Expect{Text: "Once upon", ErrKind: providers.ErrNetwork, ErrContains: "ended before the response was complete"}},
		{File: "invalid_json.sse", Want: providertest.Expect{Text: "ok", ErrKind: providers.ErrServer, ErrContains: "malformed stream"}},
		{File: "malformed_function_call.sse", Want: providertest.Expect{Stop: providers.StopUnknown, Notices: 1, Usage: usage(40, 0, 0, 0)}},
		{File: "error_400_api_key_invalid.http", Want: providertest.Expect{ErrKind: providers.ErrAuth, ErrContains: "check the key"}},
		{File: "error_403_permission.http", Want: providertest.Expect{ErrKind: providers.ErrPermission}},
		{File: "error_404_model.http", Want: providertest.Expect{ErrKind: providers.ErrNotFound, ErrContains: "gemini-nope"}},
		{File: "error_503_unavailable.http", Want: providertest.Expect{ErrKind: providers.ErrOverloaded, Notices: 3}},
		{File: "error_400_context_overflow.http", Want: providertest.Expect{ErrKind: providers.ErrContextOverflow}},
		{File: "error_200_array_error_body.http", Want: providertest.Expect{ErrKind: providers.ErrRateLimit, RetryAfter: 2 * time.Second, Notices: 3}},
	})
}
