package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/agentd-dev/agentd/providers/providertest"
)

// scripted is a server that answers the n-th request with the n-th handler (the last one
// repeats) and records every request.
type scripted struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	method, path string
	header       http.Header
	body         map[string]any
}

func newScripted(t *testing.T, handlers ...http.HandlerFunc) *scripted {
	t.Helper()
	s := &scripted{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, recorded{r.Method, r.URL.Path, r.Header.Clone(), body})
		s.mu.Unlock()
		handlers[min(n, len(handlers)-1)](w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scripted) all() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.requests...)
}

func sseBody(frames ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, f := range frames {
			io.WriteString(w, "data: "+f+"\n\n")
		}
	}
}

func jsonError(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

var okStream = sseBody(
	`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
	`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
	`[DONE]`)

func stream(t *testing.T, p providers.Provider, req *providers.Request) providertest.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return providertest.Collect(t, p.Stream(ctx, req))
}

func provider(t *testing.T, cfg providers.Config, url string) providers.Provider {
	t.Helper()
	cfg.BaseURL = url + "/v1"
	p, err := newTest(cfg, providertest.Transport(&providertest.Sleeps{}))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRequestHeadersAndPath(t *testing.T) {
	srv := newScripted(t, okStream)
	p := provider(t, providers.Config{Model: "m", APIKey: "sk-1", Headers: map[string]string{"X-Extra": "yes"}}, srv.URL)
	o := stream(t, p, testRequest())
	if o.Text != "ok" || o.Stop != providers.StopEndTurn {
		t.Fatalf("outcome %+v", o)
	}
	r := srv.all()[0]
	if r.method != "POST" || r.path != "/v1/chat/completions" {
		t.Fatalf("request %s %s", r.method, r.path)
	}
	for k, want := range map[string]string{"Authorization": "Bearer sk-1", "Accept": "text/event-stream", "Content-Type": "application/json", "X-Extra": "yes"} {
		if got := r.header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
}

// TestLocalServerWithoutKeyGetsNoAuthorization: loopback needs no key and gets no header.
func TestLocalServerWithoutKeyGetsNoAuthorization(t *testing.T) {
	srv := newScripted(t, okStream)
	p := provider(t, providers.Config{Model: "qwen2.5-coder"}, srv.URL)
	o := stream(t, p, testRequest())
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	if _, ok := srv.all()[0].header["Authorization"]; ok {
		t.Fatalf("an Authorization header was sent without a key: %q", srv.all()[0].header.Get("Authorization"))
	}
	if len(o.Notices) != 0 {
		t.Fatalf("loopback plain http gave notices %q", o.Notices)
	}
}

func TestOpenAIHostWithoutKeyFailsBeforeAnyRequest(t *testing.T) {
	p, err := New(providers.Config{ID: "openai", Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	o := stream(t, p, testRequest())
	if o.ErrKind() != providers.ErrAuth || !strings.Contains(o.Err.Message, "OPENAI_API_KEY") {
		t.Fatalf("outcome %+v", o.Err)
	}
	if _, err := p.(providers.ModelLister).ListModels(context.Background()); err == nil {
		t.Fatal("ListModels without a key succeeded")
	}
}

func TestNewRefusesPlainHTTPToRemoteHost(t *testing.T) {
	if _, err := New(providers.Config{BaseURL: "http://api.example.com/v1", Model: "m"}); err == nil || !strings.Contains(err.Error(), "plain http") {
		t.Fatalf("New = %v, want the plain-http refusal", err)
	}
}

func TestNoModelFails(t *testing.T) {
	srv := newScripted(t, okStream)
	p := provider(t, providers.Config{}, srv.URL)
	o := stream(t, p, testRequest())
	if o.ErrKind() != providers.ErrInvalidRequest || len(srv.all()) != 0 {
		t.Fatalf("outcome %+v after %d requests", o.Err, len(srv.all()))
	}
}

func TestPresetsAndDefaults(t *testing.T) {
	for id, want := range map[string]string{
		"openai": "https://api.openai.com/v1", "ollama": "http://127.0.0.1:11434/v1", "lmstudio": "http://127.0.0.1:1234/v1",
		"llamacpp": "http://127.0.0.1:8080/v1", "openrouter": "https://openrouter.ai/api/v1", "deepseek": "https://api.deepseek.com/v1",
	} {
		p, err := New(providers.Config{ID: id, Model: "m"})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		pp := p.(*Provider)
		if pp.BaseURL() != want {
			t.Errorf("%s base = %q, want %q", id, pp.BaseURL(), want)
		}
		pr, _ := Dialect.Preset(id)
		local := pr.KeyEnv == ""
		if pp.Endpoint().Local != local {
			t.Errorf("%s local = %v, want %v", id, pp.Endpoint().Local, local)
		}
	}
	p, _ := New(providers.Config{ID: "mine", Model: "m"})
	if p.(*Provider).BaseURL() != DefaultBaseURL {
		t.Fatalf("default base = %q", p.(*Provider).BaseURL())
	}
}

// TestUnsupportedParameterRetriedOnceAndRemembered: a 400 naming temperature is retried once
// without it, and the next turn to the same server and model leaves it out from the start.
func TestUnsupportedParameterRetriedOnceAndRemembered(t *testing.T) {
	srv := newScripted(t,
		jsonError(400, `{"error":{"message":"Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}`),
		okStream)
	p := provider(t, providers.Config{Model: "my-model", APIKey: "k"}, srv.URL)
	req := testRequest()
	temp := 0.2
	req.Temperature = &temp
	if o := stream(t, p, req); o.Err != nil || o.Text != "ok" || len(o.Notices) != 0 {
		t.Fatalf("first turn: %+v", o)
	}
	if o := stream(t, p, req); o.Err != nil {
		t.Fatalf("second turn: %+v", o.Err)
	}
	rs := srv.all()
	if len(rs) != 3 {
		t.Fatalf("%d requests, want 3 (refused, retried, remembered)", len(rs))
	}
	if rs[0].body["temperature"] != 0.2 {
		t.Fatalf("first request temperature = %v", rs[0].body["temperature"])
	}
	for i, r := range rs[1:] {
		if _, ok := r.body["temperature"]; ok {
			t.Fatalf("request %d still sends temperature", i+2)
		}
		if r.body["max_tokens"] != 1024.0 {
			t.Fatalf("request %d lost max_tokens: %v", i+2, r.body)
		}
	}
}

// TestMaxTokensSwappedWhenRefused: the recorded 400 for max_tokens is answered by one retry with
// max_completion_tokens; a second refusal is the user's error, not another retry.
func TestMaxTokensSwappedWhenRefused(t *testing.T) {
	refusal := `{"error":{"code":"unsupported_parameter","message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","param":"max_tokens","type":"invalid_request_error"}}`
	srv := newScripted(t, jsonError(400, refusal), okStream)
	p := provider(t, providers.Config{Model: "new-model", APIKey: "k"}, srv.URL)
	if o := stream(t, p, testRequest()); o.Err != nil {
		t.Fatal(o.Err)
	}
	rs := srv.all()
	if len(rs) != 2 || rs[1].body["max_completion_tokens"] != 1024.0 || rs[1].body["max_tokens"] != nil {
		t.Fatalf("requests %+v", rs)
	}

	srv2 := newScripted(t, jsonError(400, refusal))
	p2 := provider(t, providers.Config{Model: "new-model", APIKey: "k"}, srv2.URL)
	o := stream(t, p2, testRequest())
	if o.ErrKind() != providers.ErrInvalidRequest || len(srv2.all()) != 2 {
		t.Fatalf("outcome %+v after %d requests, want invalid_request after 2", o.Err, len(srv2.all()))
	}
}

func TestReasoningModelParameters(t *testing.T) {
	srv := newScripted(t, okStream)
	p := provider(t, providers.Config{APIKey: "k"}, srv.URL)
	req := testRequest()
	temp := 0.5
	req.Temperature = &temp
	for _, model := range []string{"gpt-5.1", "o3-mini", "o4-mini", "openai/gpt-5", "gpt-4o"} {
		req.Model = model
		if o := stream(t, p, req); o.Err != nil {
			t.Fatal(o.Err)
		}
	}
	rs := srv.all()
	for i, r := range rs[:4] {
		if r.body["max_completion_tokens"] != 1024.0 || r.body["max_tokens"] != nil || r.body["temperature"] != nil {
			t.Errorf("reasoning request %d (%v): %v", i, r.body["model"], r.body)
		}
	}
	if last := rs[4].body; last["max_tokens"] != 1024.0 || last["temperature"] != 0.5 {
		t.Errorf("gpt-4o request: %v", last)
	}
}

// TestServerRefusingTools: Ollama's "does not support tools" 400 (and the other servers'
// wordings) fails the request with ToolsRefused set, after one request: the agent loop goes on
// with the text tool-call protocol and remembers it, not the dialect.
func TestServerRefusingTools(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refusal http.HandlerFunc
	}{
		{"ollama 400", jsonError(400, `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error","param":null,"code":null}}`)},
		{"llama-server without --jinja", jsonError(500, `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`)},
		{"422 validation", jsonError(422, `{"detail":[{"loc":["body","tools"],"msg":"extra fields not permitted","type":"value_error.extra"}]}`)},
		{"404 naming tools", jsonError(404, `{"error":{"message":"tool use is not supported on this endpoint"}}`)},
		{"openrouter no endpoints", jsonError(404, `{"error":{"message":"No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing","code":404}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScripted(t, tc.refusal, okStream)
			p := provider(t, providers.Config{Model: "gemma:2b"}, srv.URL)
			o := stream(t, p, testRequest())
			if o.Err == nil || !o.Err.ToolsRefused || o.ErrKind() != providers.ErrInvalidRequest {
				t.Fatalf("outcome %+v", o.Err)
			}
			if n := len(srv.all()); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
			// Without tools in the request the same refusal is not about tools.
			req := testRequest()
			req.Tools = nil
			if o2 := stream(t, p, req); o2.Err != nil && o2.Err.ToolsRefused {
				t.Fatalf("a request without tools reported as refusing them")
			}
		})
	}
}

// TestInvalidToolSchemaIsNotMistakenForNoToolSupport: a 400 about a bad schema is the user's
// error and must not switch tools off.
func TestInvalidToolSchemaIsNotMistakenForNoToolSupport(t *testing.T) {
	srv := newScripted(t, jsonError(400, `{"error":{"message":"Invalid schema for function 'weather': 'object' is not valid under any of the given schemas. tools[0] is unsupported","type":"invalid_request_error","param":"tools[0].function.parameters","code":"invalid_function_parameters"}}`))
	p := provider(t, providers.Config{Model: "gpt-4o", APIKey: "k"}, srv.URL)
	o := stream(t, p, testRequest())
	if o.ErrKind() != providers.ErrInvalidRequest || len(srv.all()) != 1 {
		t.Fatalf("outcome %+v after %d requests", o.Err, len(srv.all()))
	}
}

func TestBadResponses(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		kind     providers.ErrorKind
		contains string
		text     string
	}{
		{"html error page from a proxy", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>")
		}, providers.ErrServer, "HTML page", ""},
		{"html with status 200", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<!DOCTYPE html><html><title>Sign in</title></html>")
		}, providers.ErrServer, "HTML page", ""},
		{"200 carrying a json error", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: sk-xx. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`)
		}, providers.ErrAuth, "API key", ""},
		{"truncated stream", sseBody(`{"choices":[{"index":0,"delta":{"content":"par"}}]}`), providers.ErrNetwork, "ended before the response was complete", "par"},
		{"invalid json in a data line", sseBody(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`, `{"choices":[{"index":0,"delta":{"content":}]}`), providers.ErrServer, "invalid JSON", "a"},
		{"cut mid-event", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"ind")
		}, providers.ErrNetwork, "ended before", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScripted(t, tt.handler)
			p := provider(t, providers.Config{Model: "m", APIKey: "k"}, srv.URL)
			o := stream(t, p, testRequest())
			if o.ErrKind() != tt.kind || !strings.Contains(o.Err.Message+" "+o.Err.Detail, tt.contains) {
				t.Fatalf("error %+v, want %s mentioning %q", o.Err, tt.kind, tt.contains)
			}
			if o.Text != tt.text {
				t.Fatalf("text %q, want %q", o.Text, tt.text)
			}
		})
	}

	t.Run("event over 64 KiB", func(t *testing.T) {
		srv := newScripted(t, sseBody(`{"choices":[{"index":0,"delta":{"content":"`+big+`"},"finish_reason":"stop"}]}`, `[DONE]`))
		p := provider(t, providers.Config{Model: "m"}, srv.URL)
		o := stream(t, p, testRequest())
		if o.Err != nil || o.Text != big {
			t.Fatalf("a 100 KiB event: err %+v, %d bytes of text", o.Err, len(o.Text))
		}
	})
}

// TestCancelClosesTheStream: cancelling ctx mid-stream ends the iterator with cancelled, and the
// server sees its connection close (a local server stops generating).
func TestCancelClosesTheStream(t *testing.T) {
	hangUp := providertest.NewHangUp()
	srv := newScripted(t, hangUp.Handler("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"))
	p := provider(t, providers.Config{Model: "m"}, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var evs []providers.Event
	for ev := range p.Stream(ctx, testRequest()) {
		evs = append(evs, ev)
		if ev.Type == providers.EventTextDelta {
			cancel()
		}
	}
	last := evs[len(evs)-1]
	if last.Type != providers.EventFailed || last.Err.Kind != providers.ErrCancelled {
		t.Fatalf("last event %+v", last)
	}
	hangUp.Wait(t)
}

// TestBreakClosesTheStream: leaving the range early closes the connection too.
func TestBreakClosesTheStream(t *testing.T) {
	hangUp := providertest.NewHangUp()
	srv := newScripted(t, hangUp.Handler("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"))
	p := provider(t, providers.Config{Model: "m"}, srv.URL)
	for range p.Stream(context.Background(), testRequest()) {
		break
	}
	hangUp.Wait(t)
}

func TestListModels(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		srv := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"object":"list","data":[{"id":"qwen2.5-coder:7b","object":"model","owned_by":"library"},{"id":"llama3.2","object":"model"}]}`)
		})
		p := provider(t, providers.Config{Model: "m", APIKey: "k"}, srv.URL)
		models, err := p.(providers.ModelLister).ListModels(context.Background())
		if err != nil || strings.Join(models, ",") != "qwen2.5-coder:7b,llama3.2" {
			t.Fatalf("models %q, err %v", models, err)
		}
		r := srv.all()[0]
		if r.method != "GET" || r.path != "/v1/models" || r.header.Get("Authorization") != "Bearer k" {
			t.Fatalf("request %s %s %q", r.method, r.path, r.header.Get("Authorization"))
		}
	})
	for _, tc := range []struct {
		status   int
		body     string
		kind     providers.ErrorKind
		contains string
	}{
		{404, `404 page not found`, providers.ErrNotFound, "check the URL"},
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, providers.ErrAuth, "check the key"},
		{403, `{"error":{"message":"forbidden"}}`, providers.ErrPermission, "check the key"},
		{200, `<html>login</html>`, providers.ErrNotFound, "check the URL"},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			srv := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			p := provider(t, providers.Config{Model: "m", APIKey: "k"}, srv.URL)
			_, err := p.(providers.ModelLister).ListModels(context.Background())
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Kind != tc.kind || !strings.Contains(pe.Message, tc.contains) {
				t.Fatalf("err %v, want %s saying %q", err, tc.kind, tc.contains)
			}
		})
	}
}

// TestPlainHTTPNoticeOncePerPrivateOrigin: plain http to a private (not loopback) address gets one
// notice per process; loopback and https get none. Nothing is sent: the notice is decided before
// any request.
func TestPlainHTTPNoticeOncePerPrivateOrigin(t *testing.T) {
	plainHTTPNoticed.Delete("http://192.168.77.20:11434")
	lan, err := newProvider(providers.Config{Model: "m", BaseURL: "http://192.168.77.20:11434/v1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := lan.plainHTTPNotice(); !strings.Contains(n, "unencrypted") {
		t.Fatalf("first notice = %q", n)
	}
	if n := lan.plainHTTPNotice(); n != "" {
		t.Fatalf("second notice = %q, want none", n)
	}
	for _, base := range []string{"http://127.0.0.1:11434/v1", "http://127.0.0.1:8080/v1", "http://[::1]:1234/v1", "http://localhost:11434/v1", "https://10.0.0.5/v1"} {
		p, err := newProvider(providers.Config{Model: "m", BaseURL: base}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := p.plainHTTPNotice(); n != "" {
			t.Errorf("%s: notice %q, want none", base, n)
		}
	}
}

// TestRedirectToAnotherOriginNeverCarriesTheKey uses the production client: a server that
// redirects the chat request elsewhere gets no second request there, key or not.
func TestRedirectToAnotherOriginNeverCarriesTheKey(t *testing.T) {
	other := newScripted(t, okStream)
	srv := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
	})
	p, err := newProvider(providers.Config{Model: "m", APIKey: "sk-secret", BaseURL: srv.URL + "/v1"},
		&httpsse.Transport{Doer: newClient(), Sleep: (&providertest.Sleeps{}).Sleep})
	if err != nil {
		t.Fatal(err)
	}
	o := stream(t, p, testRequest())
	if o.Err == nil || !strings.Contains(o.Err.Message+o.Err.Detail, "redirect") {
		t.Fatalf("outcome %+v, want a failure naming the redirect", o.Err)
	}
	if n := len(other.all()); n != 0 {
		t.Fatalf("the other origin received %d requests", n)
	}
}

// TestAuthorizationHeaderFromSettings: a key given as a header (agent/providers/set), in any
// case, is sent as is and satisfies OpenAI's key requirement.
func TestAuthorizationHeaderFromSettings(t *testing.T) {
	p, err := New(providers.Config{ID: "openai", Model: "gpt-4o", Headers: map[string]string{"authorization": "Bearer sk-h"}})
	if err != nil {
		t.Fatal(err)
	}
	if e := p.(*Provider).keyMissing(); e != nil {
		t.Fatalf("keyMissing = %v with an authorization header", e)
	}
	if got := p.(*Provider).header(true).Get("Authorization"); got != "Bearer sk-h" {
		t.Fatalf("Authorization = %q", got)
	}
}

// TestReasoningContentDroppedWhenRefused: a server whose validator refuses reasoning_content in
// history gets the turn again without it.
func TestReasoningContentDroppedWhenRefused(t *testing.T) {
	srv := newScripted(t,
		jsonError(400, `{"error":{"message":"messages.2: Extra inputs are not permitted: 'reasoning_content'","type":"invalid_request_error"}}`),
		okStream)
	p := provider(t, providers.Config{Model: "strict"}, srv.URL)
	req := testRequest()
	req.Messages = history()
	if o := stream(t, p, req); o.Err != nil {
		t.Fatal(o.Err)
	}
	rs := srv.all()
	b0, _ := json.Marshal(rs[0].body["messages"])
	b1, _ := json.Marshal(rs[1].body["messages"])
	if len(rs) != 2 || !strings.Contains(string(b0), "reasoning_content") || strings.Contains(string(b1), "reasoning_content") {
		t.Fatalf("%d requests:\n%s\n%s", len(rs), b0, b1)
	}
}

func TestListModelsDoesNotRetry(t *testing.T) {
	srv := newScripted(t, jsonError(503, `{"error":{"message":"loading model","type":"unavailable"}}`))
	p := provider(t, providers.Config{Model: "m"}, srv.URL)
	_, err := p.(providers.ModelLister).ListModels(context.Background())
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.ErrOverloaded || len(srv.all()) != 1 {
		t.Fatalf("err %v after %d requests, want overloaded after 1", err, len(srv.all()))
	}
}

// TestEventOverTheLimitFails: an event larger than the transport's limit ends the stream with a
// readable protocol error instead of hanging or panicking (the production limit is 16 MiB, so a
// 64 KiB event passes, as TestBadResponses shows).
func TestEventOverTheLimitFails(t *testing.T) {
	srv := newScripted(t, sseBody(`{"choices":[{"index":0,"delta":{"content":"`+strings.Repeat("y", 8<<10)+`"}}]}`, `[DONE]`))
	tr := providertest.Transport(&providertest.Sleeps{})
	tr.MaxEventSize = 4 << 10
	p, err := newTest(providers.Config{Model: "m", BaseURL: srv.URL + "/v1"}, tr)
	if err != nil {
		t.Fatal(err)
	}
	o := stream(t, p, testRequest())
	if o.ErrKind() != providers.ErrServer || !strings.Contains(o.Err.Message, "limit") {
		t.Fatalf("outcome %+v", o.Err)
	}
}

// TestConcurrentStreams: one provider serves several sessions at once (run with -race).
func TestConcurrentStreams(t *testing.T) {
	srv := newScripted(t,
		jsonError(400, `{"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model.","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`),
		okStream)
	p := provider(t, providers.Config{Model: "m"}, srv.URL)
	req := testRequest()
	temp := 0.3
	req.Temperature = &temp
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var last providers.Event
			for ev := range p.Stream(ctx, req) {
				last = ev
			}
			if last.Type != providers.EventCompleted {
				errs <- last.Type.String()
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a stream ended with %s", e)
	}
}

// TestCallsReuseTheConnection: a completed answer leaves its connection to the next call. The
// server flushes each event and ends the chunked body only after the consumer has seen the
// end, so the dialect's last read is never the one that meets EOF.
func TestCallsReuseTheConnection(t *testing.T) {
	var conns atomic.Int32
	finish := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, f := range []string{`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, `[DONE]`} {
			io.WriteString(w, "data: "+f+"\n\n")
			w.(http.Flusher).Flush()
		}
		<-finish
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	p := provider(t, providers.Config{Model: "m"}, srv.URL)
	for i := range 3 {
		var last providers.Event
		for ev := range p.Stream(context.Background(), testRequest()) {
			if ev.Type == providers.EventCompleted {
				finish <- struct{}{}
			}
			last = ev
		}
		if last.Type != providers.EventCompleted {
			t.Fatalf("call %d ended with %+v", i, last)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("three calls dialled %d connections, want 1", n)
	}
}
