package providers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/providers"
)

func TestClassifyResponse(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		kind    providers.ErrorKind
		retry   time.Duration
		param   string
		reqID   string
		mention string
	}{
		{"anthropic auth", 401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_1"}`, providers.ErrAuth, 0, "", "req_1", "API key"},
		{"anthropic credit balance", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`, providers.ErrQuota, 0, "", "", "billing"},
		{"anthropic billing_error", 400, nil, `{"type":"error","error":{"type":"billing_error","message":"billing"}}`, providers.ErrQuota, 0, "", "", ""},
		{"anthropic prompt too long", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`, providers.ErrContextOverflow, 0, "", "", "208310"},
		{"anthropic 413", 413, nil, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`, providers.ErrContextOverflow, 0, "", "", ""},
		{"anthropic overloaded 529", 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, providers.ErrOverloaded, 0, "", "", "overloaded"},
		{"anthropic rate limit with retry-after", 429, map[string]string{"retry-after": "27", "request-id": "req_2"}, `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`, providers.ErrRateLimit, 27 * time.Second, "", "req_2", "27 s"},
		{"retry-after-ms wins", 429, map[string]string{"retry-after": "27", "retry-after-ms": "1500"}, `{}`, providers.ErrRateLimit, 1500 * time.Millisecond, "", "", ""},
		{"openai insufficient_quota", 429, map[string]string{"x-request-id": "abc"}, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, providers.ErrQuota, 0, "", "abc", "plan and billing"},
		{"openai rate limit", 429, nil, `{"error":{"message":"Rate limit reached for gpt-4o","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`, providers.ErrRateLimit, 0, "", "", ""},
		{"openai context", 400, nil, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, providers.ErrContextOverflow, 0, "messages", "", ""},
		{"openai unsupported param", 400, nil, `{"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model.","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`, providers.ErrInvalidRequest, 0, "temperature", "", "temperature"},
		{"openai model not found", 404, nil, `{"error":{"message":"The model gpt-9 does not exist","type":"invalid_request_error","code":"model_not_found"}}`, providers.ErrNotFound, 0, "", "", "gpt-9"},
		{"openrouter upstream 429", 429, nil, `{"error":{"code":429,"message":"Provider returned error","metadata":{"provider_name":"Google","raw":"rate-limited upstream"}},"user_id":"u"}`, providers.ErrRateLimit, 0, "", "", ""},
		{"gemini resource exhausted is a rate limit", 429, nil, `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"47s"}]}}`, providers.ErrRateLimit, 47 * time.Second, "", "", "47 s"},
		{"gemini retryinfo beats header", 429, map[string]string{"Retry-After": "5"}, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.5s"}]}}`, providers.ErrRateLimit, 500 * time.Millisecond, "", "", ""},
		{"gemini bad key", 400, nil, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`, providers.ErrAuth, 0, "", "", ""},
		{"gemini context", 400, nil, `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`, providers.ErrContextOverflow, 0, "", "", ""},
		{"gemini array body", 503, nil, `[{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]`, providers.ErrOverloaded, 0, "", "", ""},
		{"gemini permission", 403, nil, `{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}`, providers.ErrPermission, 0, "", "", "denied"},
		{"plain text 500", 500, nil, `upstream connect error`, providers.ErrServer, 0, "", "", "upstream connect error"},
		{"empty 502", 502, nil, ``, providers.ErrServer, 0, "", "", ""},
		{"empty 401", 401, nil, ``, providers.ErrAuth, 0, "", "", ""},
		{"408 is network", 408, nil, ``, providers.ErrNetwork, 0, "", "", ""},
		{"402", 402, nil, `{"detail":"Payment required"}`, providers.ErrQuota, 0, "", "", "Payment required"},
		{"html 503 from a proxy", 503, map[string]string{"Content-Type": "text/html; charset=utf-8"}, "<html><title>Service Unavailable</title></html>", providers.ErrOverloaded, 0, "", "", "HTML page"},
		{"200 error object", 200, nil, `{"error":{"message":"quota","type":"insufficient_quota"}}`, providers.ErrQuota, 0, "", "", ""},
		{"200 with google code", 200, nil, `{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}`, providers.ErrServer, 0, "", "", ""},
		{"200 without error", 200, nil, `{"id":"chatcmpl-1","choices":[]}`, providers.ErrInvalidRequest, 0, "", "", "stream"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range c.header {
				h.Set(k, v)
			}
			e := providers.ClassifyResponse("Acme", c.status, h, []byte(c.body))
			if e.Kind != c.kind || e.RetryAfter != c.retry || e.Param != c.param || e.RequestID != c.reqID {
				t.Errorf("got %+v", e)
			}
			if c.mention != "" && !strings.Contains(e.Message+" "+e.Detail, c.mention) {
				t.Errorf("%q / %q does not mention %q", e.Message, e.Detail, c.mention)
			}
			checkSentence(t, e)
		})
	}
}

// checkSentence requires a user message that is one sentence, ends with a full stop and says
// what to do (every message has an instruction after a semicolon, or is the cancellation notice).
func checkSentence(t *testing.T, e *providers.Error) {
	t.Helper()
	m := e.Message
	if m == "" || strings.ContainsAny(m, "\n\r") || !strings.HasSuffix(m, ".") {
		t.Errorf("message %q is not one sentence", m)
	}
	if e.Kind != providers.ErrCancelled && !strings.Contains(m, "; ") {
		t.Errorf("message %q does not say what to do", m)
	}
	if len(m) > 400 {
		t.Errorf("message is %d bytes long", len(m))
	}
}

func TestEveryKindHasAnActionableMessage(t *testing.T) {
	for _, k := range []providers.ErrorKind{providers.ErrAuth, providers.ErrPermission, providers.ErrRateLimit, providers.ErrQuota,
		providers.ErrOverloaded, providers.ErrContextOverflow, providers.ErrInvalidRequest, providers.ErrNotFound,
		providers.ErrContentFilter, providers.ErrServer, providers.ErrNetwork, providers.ErrCancelled} {
		e := &providers.Error{Kind: k, Message: providers.UserMessage("Acme", k, strings.Repeat("detail ", 100), 8*time.Second)}
		checkSentence(t, e)
	}
}

func TestClassifyStreamError(t *testing.T) {
	for _, c := range []struct {
		typ, msg string
		status   int
		kind     providers.ErrorKind
	}{
		{"overloaded_error", "Overloaded", 0, providers.ErrOverloaded},
		{"api_error", "Internal server error", 0, providers.ErrServer},
		{"rate_limit_error", "slow", 0, providers.ErrRateLimit},
		{"tool_use_failed", "Tool call validation failed", 400, providers.ErrInvalidRequest},
		{"INTERNAL", "An internal error has occurred", 500, providers.ErrServer},
		{"", "something", 0, providers.ErrServer},
		{"", "something", 429, providers.ErrRateLimit},
	} {
		e := providers.ClassifyStreamError("Acme", c.typ, c.msg, c.status)
		if e.Kind != c.kind || e.Detail != c.msg {
			t.Errorf("%s/%d: got %+v", c.typ, c.status, e)
		}
		checkSentence(t, e)
	}
}

func TestNetworkErrorAndCancellation(t *testing.T) {
	e := providers.NetworkError(context.Background(), "Acme", errors.New("dial tcp: connection refused"))
	if e.Kind != providers.ErrNetwork || !e.Retryable() || !strings.Contains(e.Message, "connection refused") {
		t.Errorf("got %+v", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if e := providers.NetworkError(ctx, "Acme", errors.New("read: use of closed connection")); e.Kind != providers.ErrCancelled || e.Retryable() {
		t.Errorf("got %+v", e)
	}
	if e := providers.NetworkError(context.Background(), "Acme", fmt.Errorf("wrapped: %w", context.Canceled)); e.Kind != providers.ErrCancelled {
		t.Errorf("got %+v", e)
	}
	checkSentence(t, providers.Truncated("Acme"))
	checkSentence(t, providers.ProtocolError("Acme", "invalid JSON"))
}

func TestRetryAfterFromHeader(t *testing.T) {
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	for _, c := range []struct {
		h    map[string]string
		want time.Duration
		tol  time.Duration
	}{
		{map[string]string{"Retry-After": "8"}, 8 * time.Second, 0},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, 0},
		{map[string]string{"retry-after-ms": "250"}, 250 * time.Millisecond, 0},
		{map[string]string{"Retry-After": future}, 90 * time.Second, 2 * time.Second},
		{map[string]string{"Retry-After": "-3"}, 0, 0},
		{map[string]string{"Retry-After": "soon"}, 0, 0},
		{map[string]string{"retry-after-ms": "NaN", "Retry-After": "2"}, 2 * time.Second, 0},
		{nil, 0, 0},
	} {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		got := providers.RetryAfterFromHeader(h)
		if got < c.want-c.tol || got > c.want+c.tol {
			t.Errorf("%v: got %v, want %v", c.h, got, c.want)
		}
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		250 * time.Millisecond:  "250 ms",
		8 * time.Second:         "8 s",
		1500 * time.Millisecond: "2 s",
		47 * time.Second:        "47 s",
		10 * time.Minute:        "10 min",
	} {
		if got := providers.HumanDuration(d); got != want {
			t.Errorf("%v: got %q, want %q", d, got, want)
		}
	}
}

func TestEmitterEndsOnce(t *testing.T) {
	var got []providers.EventType
	em := providers.NewEmitter(func(ev providers.Event) bool { got = append(got, ev.Type); return true })
	em.Emit(providers.Event{Type: providers.EventTextDelta})
	em.Complete(providers.StopEndTurn)
	em.Fail(providers.Cancelled())
	em.Emit(providers.Event{Type: providers.EventTextDelta})
	em.Finish(nil)
	if fmt.Sprint(got) != "[text_delta completed]" {
		t.Errorf("events %v", got)
	}

	got = nil
	em = providers.NewEmitter(func(ev providers.Event) bool { got = append(got, ev.Type); return false })
	if em.Notice("retrying") || !em.Stopped() || !em.Ended() {
		t.Error("a consumer that left is not seen")
	}
	em.Fail(providers.Cancelled()) // must not call yield again: range-over-func would panic
	if fmt.Sprint(got) != "[notice]" {
		t.Errorf("events %v", got)
	}

	got = nil
	em = providers.NewEmitter(func(ev providers.Event) bool { got = append(got, ev.Type); return true })
	em.Finish(nil)
	if fmt.Sprint(got) != "[failed]" {
		t.Errorf("Finish without an outcome: %v", got)
	}
}

func FuzzClassifyResponse(f *testing.F) {
	f.Add(429, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"47s"}]}}`, "3")
	f.Add(400, `[{"error":{"message":"x"}}]`, "")
	f.Add(502, `<html><title>x`, "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add(200, `{"error":"plain"}`, "1e400")
	f.Fuzz(func(t *testing.T, status int, body, retryAfter string) {
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		e := providers.ClassifyResponse("Acme", status, h, []byte(body))
		if e == nil || e.Kind == "" || e.Message == "" || e.RetryAfter < 0 {
			t.Fatalf("got %+v", e)
		}
	})
}

// A network error names the provider in the middle of its sentence: "The server at x" from the
// openai dialect must not read "Could not reach The server at x".
func TestUserMessageNetworkNameMidSentence(t *testing.T) {
	for who, want := range map[string]string{
		"The server at 127.0.0.1:9": "Could not reach the server at 127.0.0.1:9; check the network connection and the base URL.",
		"":                          "Could not reach the provider; check the network connection and the base URL.",
		"OpenRouter":                "Could not reach OpenRouter; check the network connection and the base URL.",
	} {
		if got := providers.UserMessage(who, providers.ErrNetwork, "", 0); got != want {
			t.Errorf("UserMessage(%q, network) = %q, want %q", who, got, want)
		}
	}
}
