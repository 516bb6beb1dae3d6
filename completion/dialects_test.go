package completion

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
)

// fixture is one file of testdata/completion.
type fixture struct {
	Request struct {
		Path          string         `json:"path"`
		Authorization string         `json:"authorization"`
		Body          map[string]any `json:"body"`
	} `json:"request"`
	Response json.RawMessage `json:"response"`
	Want     string          `json:"want"`
}

func readFixture(t *testing.T, name string) fixture {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "completion", name))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

// replay serves f's response at f's path and fails the test when the request differs from what
// f says it must be.
func replay(t *testing.T, f fixture) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != f.Request.Path {
			t.Errorf("request %s %s, want POST %s", r.Method, r.URL.Path, f.Request.Path)
		}
		if got := r.Header.Get("Authorization"); got != f.Request.Authorization {
			t.Errorf("Authorization %q, want %q", got, f.Request.Authorization)
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request body: %v", err)
		}
		for k, want := range f.Request.Body {
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(body[k])
			if string(wj) != string(gj) {
				t.Errorf("request field %s = %s, want %s", k, gj, wj)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(f.Response)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// engine is an Engine whose provider "p" is cfg (with the base URL given) and whose chat
// provider is prov.
func engine(set config.Completion, cfg providers.Config, prov providers.Provider) *Engine {
	return &Engine{
		Settings: func() config.Completion { return set },
		Resolve: func(ctx context.Context, id string) (providers.Provider, providers.Config, error) {
			if id != set.Provider {
				return nil, cfg, context.Canceled
			}
			return prov, cfg, nil
		},
	}
}

func split(text string) (string, string) {
	prefix, suffix, _ := strings.Cut(text, "<|>")
	return prefix, suffix
}

func TestDialectsReplayTheirFixtures(t *testing.T) {
	for _, tc := range []struct {
		fixture, endpoint, apiType, base, key, model string
		others                                       []File
	}{
		{fixture: "completions.json", endpoint: "completions", apiType: "openai", base: "/v1", key: "sk-test-completions", model: "qwen2.5-coder:1.5b"},
		{fixture: "infill.json", endpoint: "infill", apiType: "openai", base: "/v1", model: "qwen2.5-coder",
			others: []File{{Path: "/w/names.py", Text: "NAMES = ['ada']\n"}}},
		{fixture: "fim.json", endpoint: "fim", apiType: "openai", base: "/v1", key: "sk-test-fim", model: "codestral-latest"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			f := readFixture(t, tc.fixture)
			srv := replay(t, f)
			set := config.Completion{Provider: "p", Model: tc.model, Endpoint: tc.endpoint, MaxTokens: 64}
			e := engine(set, providers.Config{ID: "p", APIType: tc.apiType, BaseURL: srv.URL + tc.base, APIKey: tc.key}, nil)
			body := f.Request.Body
			prefix, _ := body["prompt"].(string)
			suffix, _ := body["suffix"].(string)
			if tc.endpoint == "infill" {
				prefix, suffix = body["input_prefix"].(string), body["input_suffix"].(string)
			}
			got, err := e.Complete(context.Background(), Request{Key: "doc", Path: "/w/x", Prefix: prefix, Suffix: suffix, Others: tc.others})
			if err != nil {
				t.Fatal(err)
			}
			if got != f.Want {
				t.Errorf("suggestion %q, want %q", got, f.Want)
			}
			if s := e.Stats(); s.ModelCalls != 1 || s.Failed != 0 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// chatModel is a providers.Provider that answers every request with text and records it.
type chatModel struct {
	mu   sync.Mutex
	reqs []*providers.Request
	text string
}

func (m *chatModel) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return func(yield func(providers.Event) bool) {
		for _, part := range strings.SplitAfter(m.text, " ") {
			if !yield(providers.Event{Type: providers.EventTextDelta, Text: part}) {
				return
			}
		}
		yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
	}
}

func TestChatFallbackPromptsAndUnfences(t *testing.T) {
	m := &chatModel{text: "```go\nreturn a + b\n```"}
	set := config.Completion{Provider: "p", Model: "claude-haiku-4-5"}
	e := engine(set, providers.Config{ID: "p", APIType: "anthropic"}, m)
	prefix, suffix := split("func add(a, b int) int {\n\t<|>\n}\n")
	got, err := e.Complete(context.Background(), Request{Key: "doc", Path: "/w/add.go", Language: "go", Prefix: prefix, Suffix: suffix,
		Others: []File{{Path: "/w/other.go", Text: "package w\n"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got != "return a + b" {
		t.Errorf("suggestion %q", got)
	}
	if len(m.reqs) != 1 {
		t.Fatalf("%d chat requests", len(m.reqs))
	}
	r := m.reqs[0]
	user := r.Messages[0].Parts[0].Text
	for _, want := range []string{"/w/add.go (go)", "int {\n\t<CURSOR>\n}", "Another open file, /w/other.go:\npackage w"} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user)
		}
	}
	if r.Model != "claude-haiku-4-5" || r.System != chatSystem || r.Temperature == nil || *r.Temperature != 0 {
		t.Errorf("request %+v", r)
	}
}

// A newer request for the same document cancels the older one, HTTP request included; the older
// one answers empty, and only one model request is in flight at a time.
func TestNewerRequestCancelsOlder(t *testing.T) {
	var mu sync.Mutex
	inflight, maxInflight, cancelled := 0, 0, 0
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		inflight++
		maxInflight = max(maxInflight, inflight)
		mu.Unlock()
		defer func() { mu.Lock(); inflight--; mu.Unlock() }()
		select {
		case <-r.Context().Done():
			mu.Lock()
			cancelled++
			mu.Unlock()
			return
		case <-release:
		}
		w.Write([]byte(`{"choices":[{"text":"b)"}]}`))
	}))
	defer srv.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock() // before srv.Close, which waits for the handlers
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions"}
	e := engine(set, providers.Config{ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1"}, nil)
	// In flight as agentd sees it: from the request's start until its Do returns (a cancelled
	// request returns at once; the server may notice the cancel only later).
	doer := &countingDoer{inner: srv.Client()}
	e.Doer = doer

	first := make(chan string, 1)
	go func() {
		s, _ := e.Complete(context.Background(), Request{Key: "doc", Prefix: "f(a, ", Suffix: ")\n"})
		first <- s
	}()
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return inflight == 1 })
	second := make(chan string, 1)
	go func() {
		s, _ := e.Complete(context.Background(), Request{Key: "doc", Prefix: "f(a, b", Suffix: ")\n"})
		second <- s
	}()
	if s := recv(t, first); s != "" {
		t.Errorf("the superseded request answered %q", s)
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return cancelled == 1 && inflight == 1 })
	unblock()
	if s := recv(t, second); s != "b" {
		t.Errorf("the newer request answered %q, want b", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := doer.max(); n != 1 {
		t.Errorf("%d model requests in flight at once (the server saw %d)", n, maxInflight)
	}
	if st := e.Stats(); st.Cancelled != 1 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
}

// Typing what was suggested is answered from the suggestion, without a model call.
func TestTypingThroughASuggestion(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Write([]byte(`{"choices":[{"text":"hello, world\")"}]}`))
	}))
	defer srv.Close()
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions"}
	e := engine(set, providers.Config{ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1"}, nil)
	ctx := context.Background()
	prefix, suffix := `fmt.Println("`, "\")\n"
	got, _ := e.Complete(ctx, Request{Key: "doc", Prefix: prefix, Suffix: suffix})
	if got != "hello, world" {
		t.Fatalf("first suggestion %q", got)
	}
	for i, want := range []string{"ello, world", "llo, world", "lo, world"} {
		got, _ := e.Complete(ctx, Request{Key: "doc", Prefix: prefix + "hello, world"[:i+1], Suffix: suffix})
		if got != want {
			t.Errorf("after typing %q: %q, want %q", "hello, world"[:i+1], got, want)
		}
	}
	// Typing something else asks the model again.
	e.Complete(ctx, Request{Key: "doc", Prefix: prefix + "hex", Suffix: suffix})
	if calls != 2 {
		t.Errorf("%d model calls, want 2", calls)
	}
	if st := e.Stats(); st.TypedThrough != 3 || st.ModelCalls != 2 {
		t.Errorf("stats %+v", st)
	}
}

// A provider error is one log line and an empty answer; the key never reaches the log.
func TestProviderErrorIsEmptyAndQuiet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"bad key sk-secret-123"}}`))
	}))
	defer srv.Close()
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "fim"}
	e := engine(set, providers.Config{ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-secret-123"}, nil)
	var logged strings.Builder
	e.Log = testLogger(&logged)
	got, err := e.Complete(context.Background(), Request{Key: "doc", Prefix: "x = ", Suffix: ""})
	if err != nil || got != "" {
		t.Fatalf("got %q, %v; want an empty answer and no error", got, err)
	}
	if n := strings.Count(logged.String(), "inline completion failed"); n != 1 {
		t.Errorf("%d log lines:\n%s", n, logged.String())
	}
	if strings.Contains(logged.String(), "sk-secret-123") {
		t.Errorf("the key reached the log:\n%s", logged.String())
	}
	if !strings.Contains(logged.String(), "401") {
		t.Errorf("the log does not say what failed:\n%s", logged.String())
	}
}

// A base URL that redirects to another origin does not get the key sent there.
func TestRedirectElsewhereKeepsTheKey(t *testing.T) {
	var sawKey bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawKey = r.Header.Get("Authorization") != ""
		w.Write([]byte(`{"choices":[{"text":"x"}]}`))
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/completions", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions"}
	e := engine(set, providers.Config{ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-bound"}, nil)
	got, _ := e.Complete(context.Background(), Request{Key: "doc", Prefix: "a", Suffix: ""})
	if got != "" || sawKey {
		t.Errorf("got %q, key sent to the other origin: %v", got, sawKey)
	}
}

func TestNotConfigured(t *testing.T) {
	e := engine(config.Completion{}, providers.Config{}, nil)
	if _, err := e.Complete(context.Background(), Request{Key: "d"}); err != ErrNotConfigured {
		t.Errorf("err %v", err)
	}
}

func TestFitKeepsTheTextNearestTheCursor(t *testing.T) {
	prefix := strings.Repeat("far line\n", 100) + "near line\nx := "
	suffix := "\nnext line\n" + strings.Repeat("later line\n", 100)
	r := fit(Request{Path: "/a", Prefix: prefix, Suffix: suffix, Others: []File{{Path: "/a", Text: "same file"}, {Path: "/big", Text: strings.Repeat("z", 500)}, {Path: "/small", Text: "tiny"}}}, 200)
	if !strings.HasSuffix(r.Prefix, "near line\nx := ") || !strings.HasPrefix(r.Suffix, "\nnext line\n") {
		t.Errorf("prefix %q suffix %q", r.Prefix, r.Suffix)
	}
	if strings.HasPrefix(r.Prefix, "ar line") || !strings.HasSuffix(r.Suffix, "\n") {
		t.Errorf("cut inside a line: prefix %q suffix %q", r.Prefix, r.Suffix)
	}
	if n := len(r.Prefix) + len(r.Suffix); n > 200 {
		t.Errorf("%d characters over a budget of 200", n)
	}
	if len(r.Others) != 1 || r.Others[0].Path != "/small" {
		t.Errorf("others %+v", r.Others)
	}
	// A multi-byte character is never cut.
	r = fit(Request{Prefix: strings.Repeat("é", 300), Suffix: ""}, 101)
	if !strings.HasPrefix(r.Prefix, "é") {
		t.Errorf("prefix starts inside a character: %q", r.Prefix[:4])
	}
}

// recv waits for a value from ch, failing the test after 5 s.
func recv(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("timed out waiting for an answer")
		return ""
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

// doerFunc is a Doer from a function.
type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// TestSupersededAnswerIsNeverShown: a model answer that was already on its way when a newer
// request for the document came (the HTTP response read despite the cancellation) is not
// answered: the editor would show a suggestion for text it no longer has. Supersede marks the
// newer request's arrival before it has read the document from the editor.
func TestSupersededAnswerIsNeverShown(t *testing.T) {
	for _, how := range []string{"newer Complete", "Supersede"} {
		t.Run(how, func(t *testing.T) {
			entered := make(chan struct{}, 2)
			release := make(chan struct{})
			set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions"}
			e := engine(set, providers.Config{ID: "p", APIType: "openai", BaseURL: "http://127.0.0.1:1/v1"}, nil)
			calls := 0
			var mu sync.Mutex
			e.Doer = doerFunc(func(r *http.Request) (*http.Response, error) {
				mu.Lock()
				calls++
				n := calls
				mu.Unlock()
				entered <- struct{}{}
				if n == 1 {
					<-release // the response arrives whatever the context says
				}
				return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(`{"choices":[{"text":"STALE"}]}`)), Header: http.Header{}}, nil
			})
			first := make(chan string, 1)
			go func() {
				s, _ := e.Complete(context.Background(), Request{Key: "doc", Prefix: "f(a, ", Suffix: ")\n"})
				first <- s
			}()
			<-entered
			if how == "Supersede" {
				e.Supersede("doc")
			} else {
				go e.Complete(context.Background(), Request{Key: "doc", Prefix: "f(a, x", Suffix: ")\n"})
				// The newer request has cancelled the older; its own model request waits for
				// the older one to end (one in flight per document).
				waitFor(t, func() bool { return e.Stats().Cancelled == 1 })
			}
			close(release)
			if s := recv(t, first); s != "" {
				t.Errorf("the superseded request answered %q", s)
			}
		})
	}
}

// countingDoer counts the requests in flight through it.
type countingDoer struct {
	inner     Doer
	mu        sync.Mutex
	now, most int
}

func (d *countingDoer) Do(r *http.Request) (*http.Response, error) {
	d.mu.Lock()
	d.now++
	d.most = max(d.most, d.now)
	d.mu.Unlock()
	defer func() { d.mu.Lock(); d.now--; d.mu.Unlock() }()
	return d.inner.Do(r)
}

func (d *countingDoer) max() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.most
}
