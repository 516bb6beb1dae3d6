package completion

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
)

// keyServer answers /v1/completions when the request carries want's key (401 otherwise) and
// records the keys it was sent.
type keyServer struct {
	*httptest.Server
	mu   sync.Mutex
	want string
	got  []string
}

func newKeyServer(t *testing.T, want string) *keyServer {
	t.Helper()
	s := &keyServer{want: want}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got = append(s.got, r.Header.Get("Authorization"))
		ok := r.Header.Get("Authorization") == "Bearer "+s.want
		s.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"bad key"}}`))
			return
		}
		w.Write([]byte(`{"choices":[{"text":"done()"}]}`))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *keyServer) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// resolver is a Resolve that counts its calls and answers what cfg holds at the time.
type resolver struct {
	mu    sync.Mutex
	calls int
	cfg   map[string]providers.Config
	err   error
}

func (r *resolver) resolve(_ context.Context, id string) (providers.Provider, providers.Config, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.err != nil {
		return nil, providers.Config{}, r.err
	}
	cfg, ok := r.cfg[id]
	if !ok {
		return nil, cfg, fmt.Errorf("no provider %q", id)
	}
	return nil, cfg, nil
}

func (r *resolver) set(id string, cfg providers.Config) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cfg[id] = cfg
}

func (r *resolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// cachingEngine is an Engine over r whose revision and clock the test moves.
func cachingEngine(set *config.Completion, r *resolver, rev *uint64, now *time.Time) *Engine {
	return &Engine{
		Settings: func() config.Completion { return *set },
		Resolve:  r.resolve,
		Revision: func() uint64 { return *rev },
		Now:      func() time.Time { return *now },
	}
}

// completeN asks for n completions of distinct texts (so each goes to the model) and returns
// the answers.
func completeN(t *testing.T, e *Engine, n int) []string {
	t.Helper()
	var out []string
	for i := range n {
		got, err := e.Complete(context.Background(), Request{Key: "doc", Prefix: fmt.Sprintf("// %d\nx := ", time.Now().UnixNano()+int64(i)), Suffix: ""})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}

// Completions in a row resolve the provider (and so ask for its key) once, not per keystroke.
func TestResolvedProviderServesTheNextCompletions(t *testing.T) {
	srv := newKeyServer(t, "sk-a")
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions"}
	r := &resolver{cfg: map[string]providers.Config{"p": {ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-a"}}}
	rev, now := uint64(1), time.Unix(1000, 0)
	e := cachingEngine(&set, r, &rev, &now)
	for i, got := range completeN(t, e, 5) {
		if got != "done()" {
			t.Fatalf("completion %d = %q", i, got)
		}
	}
	if r.count() != 1 {
		t.Errorf("Resolve called %d times for 5 completions with unchanged settings, want 1", r.count())
	}
	// Without a revision the engine cannot know what changed, and resolves every time.
	r2 := &resolver{cfg: r.cfg}
	e2 := engine(set, r.cfg["p"], nil)
	e2.Resolve = r2.resolve
	completeN(t, e2, 3)
	if r2.count() != 3 {
		t.Errorf("without Revision: Resolve called %d times for 3 completions, want 3", r2.count())
	}
}

// A settings change (a new base URL and key for the provider) is seen by the next completion:
// the old origin gets nothing more, and the new key goes only to the new origin.
func TestSettingsChangeResolvesAgain(t *testing.T) {
	a, b := newKeyServer(t, "sk-a"), newKeyServer(t, "sk-b")
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions"}
	r := &resolver{cfg: map[string]providers.Config{"p": {ID: "p", APIType: "openai", BaseURL: a.URL + "/v1", APIKey: "sk-a"}}}
	rev, now := uint64(1), time.Unix(1000, 0)
	e := cachingEngine(&set, r, &rev, &now)
	completeN(t, e, 2)
	r.set("p", providers.Config{ID: "p", APIType: "openai", BaseURL: b.URL + "/v1", APIKey: "sk-b"})
	rev++
	for i, got := range completeN(t, e, 2) {
		if got != "done()" {
			t.Errorf("completion %d after the change = %q", i, got)
		}
	}
	if n := len(a.keys()); n != 2 {
		t.Errorf("the old origin got %d requests, want the 2 made before the change", n)
	}
	for _, k := range b.keys() {
		if k != "Bearer sk-b" {
			t.Errorf("the new origin was sent %q", k)
		}
	}
	if len(b.keys()) != 2 {
		t.Errorf("the new origin got %d requests, want 2", len(b.keys()))
	}

	// The settings name another provider without the revision moving (a caller that forgot
	// to count a change): the resolution of p is not used for q.
	q := newKeyServer(t, "sk-q")
	r.set("q", providers.Config{ID: "q", APIType: "openai", BaseURL: q.URL + "/v1", APIKey: "sk-q"})
	set.Provider = "q"
	before := r.count()
	if got := completeN(t, e, 1)[0]; got != "done()" {
		t.Errorf("completion with provider q = %q", got)
	}
	if r.count() != before+1 || len(q.keys()) != 1 || len(b.keys()) != 2 {
		t.Errorf("switching to provider q: %d resolutions, q got %d requests, p's origin %d; want 1, 1, 2", r.count()-before, len(q.keys()), len(b.keys()))
	}
}

// A key the server refuses is looked up again at the next keystroke: the user who fixes the key
// in the editor's store is not held to the old one for resolveFor.
func TestRefusedKeyIsLookedUpAgain(t *testing.T) {
	srv := newKeyServer(t, "sk-new")
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions"}
	r := &resolver{cfg: map[string]providers.Config{"p": {ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-old"}}}
	rev, now := uint64(1), time.Unix(1000, 0)
	e := cachingEngine(&set, r, &rev, &now)
	if got := completeN(t, e, 1)[0]; got != "" {
		t.Fatalf("a refused key answered %q", got)
	}
	r.set("p", providers.Config{ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-new"})
	if got := completeN(t, e, 1)[0]; got != "done()" {
		t.Errorf("after the key was fixed: %q, want the suggestion", got)
	}
	if r.count() != 2 {
		t.Errorf("Resolve called %d times, want 2 (the failure drops the resolution)", r.count())
	}
	// A resolution that failed is not kept either.
	r.mu.Lock()
	r.err = errors.New("secret store unreachable")
	r.mu.Unlock()
	rev++
	completeN(t, e, 1)
	r.mu.Lock()
	r.err = nil
	r.mu.Unlock()
	if got := completeN(t, e, 1)[0]; got != "done()" || r.count() != 4 {
		t.Errorf("after a failed resolution: %q with %d resolutions, want the suggestion with 4", got, r.count())
	}
}

// A resolution serves for resolveFor at most: a key changed where agentd is not told is seen
// within it. A clock that goes back does not stretch it.
func TestResolutionExpires(t *testing.T) {
	srv := newKeyServer(t, "sk-a")
	set := config.Completion{Provider: "p", Model: "m", Endpoint: "completions"}
	r := &resolver{cfg: map[string]providers.Config{"p": {ID: "p", APIType: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-a"}}}
	rev, now := uint64(1), time.Unix(1000, 0)
	e := cachingEngine(&set, r, &rev, &now)
	completeN(t, e, 1)
	now = now.Add(resolveFor - time.Second)
	completeN(t, e, 1)
	if r.count() != 1 {
		t.Fatalf("%d resolutions within resolveFor, want 1", r.count())
	}
	now = now.Add(2 * time.Second)
	completeN(t, e, 1)
	if r.count() != 2 {
		t.Errorf("%d resolutions after resolveFor passed, want 2", r.count())
	}
	now = now.Add(-time.Hour)
	completeN(t, e, 1)
	if r.count() != 3 {
		t.Errorf("%d resolutions after the clock went back, want 3", r.count())
	}
}
