package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentd-dev/agentd/internal/clip"
)

// This file is the one error classifier every dialect shares: it turns an HTTP status with its
// headers and body, an in-stream error object, a transport failure or a broken stream into an
// *Error whose Kind tells the loop whether to retry and whose Message tells the user what to do.

// ClassifyResponse classifies a failed HTTP exchange: a non-2xx status, or a 2xx whose body is a
// JSON error or an HTML page instead of a stream. who names the provider in messages ("Anthropic");
// body may be truncated. The error bodies of Anthropic, OpenAI (and compatible servers,
// OpenRouter included) and Google are understood; anything else falls back on the status.
func ClassifyResponse(who string, status int, header http.Header, body []byte) *Error {
	e := &Error{Status: status}
	if header != nil {
		e.RequestID = firstHeader(header, "request-id", "x-request-id", "x-goog-request-id", "cf-ray")
		e.RetryAfter = RetryAfterFromHeader(header)
	}
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	ct := ""
	if header != nil {
		ct = strings.ToLower(header.Get("Content-Type"))
	}
	if strings.Contains(ct, "text/html") || bytes.HasPrefix(trimmed, []byte("<")) {
		e.Kind = kindFromStatus(status)
		if status/100 == 2 {
			e.Kind = ErrServer
		}
		e.Detail = htmlTitle(trimmed)
		e.Message = fmt.Sprintf("%s returned an HTML page instead of an API response (HTTP %d); a proxy or gateway may be in the way, so check the base URL or try again later.", name(who), status)
		return e
	}

	var info errInfo
	parsed := parseErrorBody(trimmed, &info)
	if info.requestID != "" && e.RequestID == "" {
		e.RequestID = info.requestID
	}
	if info.retryDelay > 0 {
		// Google's RetryInfo is more specific than any header.
		e.RetryAfter = info.retryDelay
	}
	e.Param = info.param
	e.Detail = info.message
	if !parsed || e.Detail == "" {
		e.Detail = clip.String(strings.TrimSpace(string(trimmed)), 300, "…")
	}
	if status/100 == 2 {
		if !parsed {
			// A 200 whose body is JSON but no recognizable error: the endpoint did not stream.
			e.Kind = ErrInvalidRequest
			e.Message = fmt.Sprintf("%s answered with a plain JSON body instead of a stream; check that the base URL points at a streaming-capable API.", name(who))
			return e
		}
		// A 200 carrying an error object: the object's own code is the status that counts.
		if info.status != 0 {
			e.Status = info.status
		}
	}
	e.Kind = classify(e.Status, info)
	if e.Kind == "" {
		e.Kind = ErrServer
	}
	e.Message = UserMessage(who, e.Kind, e.Detail, e.RetryAfter)
	return e
}

// ClassifyStreamError classifies an error object a provider sent inside a 200 stream
// (Anthropic's `event: error`, an OpenAI-style `{"error":…}` chunk, Groq's `event: error`).
// errType is the provider's type or code ("overloaded_error", "rate_limit_exceeded"), status the
// HTTP-like code the object carries, if any.
func ClassifyStreamError(who, errType, message string, status int) *Error {
	info := errInfo{typ: errType, message: message, code: errType}
	kind := classify(status, info)
	if kind == "" {
		kind = kindFromStatus(status)
		if status == 0 {
			kind = ErrServer
		}
	}
	return &Error{Kind: kind, Status: status, Detail: message, Message: UserMessage(who, kind, message, 0)}
}

// NetworkError classifies a transport failure (dial, TLS, reset, a read that failed midway). A
// cancelled or expired ctx makes it cancelled.
func NetworkError(ctx context.Context, who string, err error) *Error {
	if ctx != nil && ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return Cancelled()
	}
	detail := ""
	if err != nil {
		detail = err.Error()
	}
	return &Error{Kind: ErrNetwork, Detail: detail, Message: UserMessage(who, ErrNetwork, detail, 0)}
}

// Cancelled is the error a stream ends with when its context was cancelled or its consumer left.
func Cancelled() *Error {
	return &Error{Kind: ErrCancelled, Message: "The request was cancelled."}
}

// ProtocolError reports a stream the dialect could not make sense of (invalid JSON in a data
// line, an oversized event, an event out of order). It is the provider's fault, not the user's.
func ProtocolError(who, detail string) *Error {
	return &Error{
		Kind:    ErrServer,
		Detail:  detail,
		Message: fmt.Sprintf("%s sent a malformed stream (%s); try again, and report it if it keeps happening.", name(who), clip.String(strings.TrimSpace(detail), 120, "…")),
	}
}

// Truncated reports a stream that ended without the provider's end marker: the connection was
// cut, so the answer is incomplete.
func Truncated(who string) *Error {
	return &Error{
		Kind:    ErrNetwork,
		Detail:  "stream ended without its end marker",
		Message: fmt.Sprintf("The connection to %s ended before the response was complete; try again.", name(who)),
	}
}

// UserMessage is the one sentence a user sees for an error of kind from provider who, with the
// provider's own detail where it helps.
func UserMessage(who string, kind ErrorKind, detail string, retryAfter time.Duration) string {
	p := name(who)
	d := clip.String(strings.TrimSpace(detail), 200, "…")
	switch kind {
	case ErrAuth:
		return fmt.Sprintf("%s rejected the API key; check the key configured for this provider.", p)
	case ErrPermission:
		return fmt.Sprintf("%s refused access with this key%s; check the key's permissions and that the model is available to your account.", p, paren(d))
	case ErrRateLimit:
		if retryAfter > 0 {
			return fmt.Sprintf("%s is rate limiting requests; wait %s and try again, or lower the request rate.", p, HumanDuration(retryAfter))
		}
		return fmt.Sprintf("%s is rate limiting requests; wait a moment and try again.", p)
	case ErrQuota:
		return fmt.Sprintf("%s says the quota or credit balance is used up%s; check your plan and billing.", p, paren(d))
	case ErrOverloaded:
		return fmt.Sprintf("%s is overloaded right now; try again in a few moments.", p)
	case ErrContextOverflow:
		return fmt.Sprintf("The conversation is too long for the model's context window%s; compact it or start a new session.", paren(d))
	case ErrInvalidRequest:
		if d == "" {
			return fmt.Sprintf("%s rejected the request; check the model and provider settings.", p)
		}
		return fmt.Sprintf("%s rejected the request (%s); check the model and provider settings.", p, d)
	case ErrNotFound:
		return fmt.Sprintf("%s does not know this model or endpoint%s; check the model name and the base URL.", p, paren(d))
	case ErrContentFilter:
		return fmt.Sprintf("%s blocked the content for safety reasons%s; rephrase the request.", p, paren(d))
	case ErrServer:
		return fmt.Sprintf("%s had an internal error%s; try again.", p, paren(d))
	case ErrNetwork:
		return fmt.Sprintf("Could not reach %s%s; check the network connection and the base URL.", midSentence(p), paren(d))
	case ErrCancelled:
		return "The request was cancelled."
	}
	return fmt.Sprintf("%s failed%s; try again.", p, paren(d))
}

// RetryAfterFromHeader reads retry-after-ms (milliseconds, OpenAI and Anthropic SDKs) and
// Retry-After (seconds or an HTTP date). It returns 0 when neither is present or parseable.
func RetryAfterFromHeader(h http.Header) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && !math.IsInf(ms, 0) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			if s > 0 && s < 1e9 {
				return time.Duration(s * float64(time.Second))
			}
			return 0
		}
		if t, err := http.ParseTime(v); err == nil {
			if d := time.Until(t); d > 0 {
				return d
			}
		}
	}
	return 0
}

// HumanDuration renders a wait the way notices and messages say it: "8 s", "250 ms", "2 min".
func HumanDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < 2*time.Minute:
		return fmt.Sprintf("%d s", int((d+time.Second-1)/time.Second))
	default:
		return fmt.Sprintf("%d min", int((d+time.Minute-1)/time.Minute))
	}
}

// errInfo is what the classifier extracts from any provider's error body.
type errInfo struct {
	typ        string // Anthropic error.type, OpenAI error.type
	code       string // OpenAI error.code (string or number), Google error.status
	status     int    // error.code when numeric (Google, OpenRouter)
	message    string
	param      string
	requestID  string
	reason     string // Google ErrorInfo.reason
	retryDelay time.Duration
}

type errorEnvelope struct {
	Type      string          `json:"type"`
	RequestID string          `json:"request_id"`
	Error     json.RawMessage `json:"error"`
	Message   string          `json:"message"`
	Detail    json.RawMessage `json:"detail"`
}

type errorObject struct {
	Type     string          `json:"type"`
	Message  string          `json:"message"`
	Code     json.RawMessage `json:"code"`
	Param    *string         `json:"param"`
	Status   string          `json:"status"`
	Details  []googleDetail  `json:"details"`
	Metadata *struct {
		Raw          string `json:"raw"`
		ProviderName string `json:"provider_name"`
	} `json:"metadata"`
}

type googleDetail struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"`
	Reason     string `json:"reason"`
}

// parseErrorBody fills info from an error body in any of the known shapes. Google's streaming
// endpoint wraps its error in an array, so a leading '[' is unwrapped.
func parseErrorBody(b []byte, info *errInfo) bool {
	if len(b) == 0 {
		return false
	}
	if b[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(b, &arr) != nil || len(arr) == 0 {
			return false
		}
		b = arr[0]
	}
	var env errorEnvelope
	if json.Unmarshal(b, &env) != nil {
		return false
	}
	info.requestID = env.RequestID
	raw := bytes.TrimSpace(env.Error)
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var obj errorObject
		if json.Unmarshal(raw, &obj) != nil {
			return false
		}
		info.typ = obj.Type
		info.message = obj.Message
		if obj.Param != nil {
			info.param = *obj.Param
		}
		if len(obj.Code) > 0 {
			var s string
			var n int
			if json.Unmarshal(obj.Code, &s) == nil {
				info.code = s
			} else if json.Unmarshal(obj.Code, &n) == nil {
				info.status = n
			}
		}
		if obj.Status != "" && info.code == "" {
			info.code = obj.Status
		}
		if obj.Metadata != nil && obj.Metadata.Raw != "" {
			info.message = strings.TrimSpace(info.message + ": " + obj.Metadata.Raw)
			if obj.Metadata.ProviderName != "" {
				info.message += " (upstream " + obj.Metadata.ProviderName + ")"
			}
		}
		for _, d := range obj.Details {
			switch {
			case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
				if dd, err := time.ParseDuration(d.RetryDelay); err == nil && dd > 0 {
					info.retryDelay = dd
				}
			case strings.HasSuffix(d.Type, "google.rpc.ErrorInfo"):
				info.reason = d.Reason
			}
		}
		return true
	case len(raw) > 0 && raw[0] == '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		info.message = s
		info.typ = env.Type
		return true
	case env.Message != "":
		info.message = env.Message
		info.typ = env.Type
		return true
	case len(env.Detail) > 0:
		var s string
		if json.Unmarshal(env.Detail, &s) == nil {
			info.message = s
		} else {
			info.message = clip.String(strings.TrimSpace(string(env.Detail)), 300, "…")
		}
		return true
	}
	return false
}

// classify picks a kind from the body's words first (they are more precise than the status),
// then returns "" to let the caller fall back on the status.
func classify(status int, info errInfo) ErrorKind {
	if (status == 0 || status/100 == 2) && info.status != 0 {
		status = info.status
	}
	typ := strings.ToLower(info.typ)
	code := strings.ToLower(info.code)
	msg := strings.ToLower(info.message)
	reason := strings.ToUpper(info.reason)
	has := func(words ...string) bool {
		for _, w := range words {
			if typ == w || code == w {
				return true
			}
		}
		return false
	}

	switch {
	// A spent quota or credit balance will not come back by retrying. Google's RESOURCE_EXHAUSTED
	// talks about "quota" and "billing" but is a rate limit with a RetryInfo delay, so only the
	// explicit codes count here.
	case has("insufficient_quota", "billing_error", "billing_not_active", "payment_required"),
		strings.Contains(msg, "credit balance is too low"),
		status == http.StatusPaymentRequired:
		return ErrQuota
	case has("context_length_exceeded", "request_too_large", "string_above_max_length"),
		strings.Contains(msg, "prompt is too long"),
		strings.Contains(msg, "context length"),
		strings.Contains(msg, "context window"),
		strings.Contains(msg, "maximum context"),
		strings.Contains(msg, "input token count") && strings.Contains(msg, "exceeds"),
		status == http.StatusRequestEntityTooLarge:
		return ErrContextOverflow
	case reason == "API_KEY_INVALID", strings.Contains(msg, "api key not valid"),
		has("authentication_error", "invalid_api_key", "unauthenticated"):
		return ErrAuth
	case has("permission_error", "permission_denied"):
		return ErrPermission
	case has("not_found_error", "not_found", "model_not_found"):
		return ErrNotFound
	case has("rate_limit_error", "rate_limit_exceeded", "resource_exhausted", "tokens", "requests", "too_many_requests"):
		return ErrRateLimit
	case has("overloaded_error", "unavailable", "overloaded", "server_overloaded"):
		return ErrOverloaded
	case has("api_error", "internal", "server_error", "internal_server_error", "timeout_error", "deadline_exceeded"):
		return ErrServer
	case has("invalid_request_error", "invalid_argument", "failed_precondition", "tool_use_failed", "invalid_value", "unsupported_parameter", "unsupported_value", "out_of_range"):
		return ErrInvalidRequest
	}
	if status != 0 && status/100 != 2 {
		return kindFromStatus(status)
	}
	return ""
}

func kindFromStatus(status int) ErrorKind {
	switch {
	case status == 401:
		return ErrAuth
	case status == 403:
		return ErrPermission
	case status == 404:
		return ErrNotFound
	case status == 408:
		return ErrNetwork
	case status == 402:
		return ErrQuota
	case status == 413:
		return ErrContextOverflow
	case status == 429:
		return ErrRateLimit
	case status == 503 || status == 529:
		return ErrOverloaded
	case status >= 500:
		return ErrServer
	case status >= 400:
		return ErrInvalidRequest
	}
	return ErrServer
}

func firstHeader(h http.Header, keys ...string) string {
	for _, k := range keys {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

func htmlTitle(b []byte) string {
	// ASCII-only lowering keeps byte offsets aligned with b (bytes.ToLower would not, on
	// invalid UTF-8).
	lower := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	if i := bytes.Index(lower, []byte("<title>")); i >= 0 {
		start := i + len("<title>")
		if j := bytes.Index(lower[start:], []byte("</title>")); j >= 0 {
			return clip.String(strings.TrimSpace(strings.Join(strings.Fields(string(b[start:start+j])), " ")), 200, "…")
		}
	}
	return clip.String(strings.TrimSpace(string(b)), 200, "…")
}

func name(who string) string {
	if who == "" {
		return "The provider"
	}
	return who
}

// midSentence is a provider's name where it does not start the sentence: "The server at x" reads
// "the server at x" there, while a proper name ("OpenRouter") is kept as it is.
func midSentence(p string) string {
	if rest, ok := strings.CutPrefix(p, "The "); ok {
		return "the " + rest
	}
	return p
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// RefusesTools reports whether an error says the server (or model) does not take tools: a 400,
// 404 or 422 (or llama-server's 500) whose message names tools together with a refusal.
func RefusesTools(e *Error) bool {
	switch e.Status {
	case 400, 404, 422, 500:
	default:
		return false
	}
	if e.Param == "tools" || e.Param == "tool_choice" {
		return true
	}
	return ToolsRefusalText(e.Detail + " " + e.Message)
}

// ToolsRefusalText recognizes the known wordings: Ollama's "… does not support tools",
// llama-server's "tools param requires --jinja flag", OpenRouter's "No endpoints found that
// support tool use", validators' "extra fields not permitted" on tools. A complaint about a
// tool's schema is the request's fault and does not count.
func ToolsRefusalText(msg string) bool {
	msg = strings.ToLower(msg)
	if !strings.Contains(msg, "tool") || strings.Contains(msg, "schema") {
		return false
	}
	for _, w := range []string{"not support", "unsupported", "unrecognized", "unknown", "not allowed", "not permitted", "--jinja", "no endpoints found", "extra"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}
