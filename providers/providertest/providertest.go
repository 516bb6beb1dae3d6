// Package providertest is the conformance harness every provider dialect is tested with: it serves
// recorded wire bytes (an SSE body, or a whole HTTP response in a .http file) from a local httptest
// server, runs a dialect against it, checks the stream contract (exactly one terminal event, last;
// every tool call completed with valid JSON arguments) and reduces the events to a normalized
// Outcome that a table of expectations is compared with. Recorded files live in the shared
// fixtures (<repo root>/../shared/fixtures/providers/, never copied into the repo) and in each
// dialect's own testdata.
package providertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

// RepoRoot walks up from the working directory to the directory holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("providertest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// SharedFixtures returns <repo root>/../shared/fixtures/providers/<sub>. When the shared directory
// is absent it skips the test with a clear message on a developer's clone, and fails it when the
// CI environment variable is set: CI must run the recorded-stream tables, not skip them quietly.
func SharedFixtures(t testing.TB, sub string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(RepoRoot(t)), "shared", "fixtures", "providers", sub)
	requireDir(t, dir, os.Getenv("CI") != "")
	return dir
}

// requireDir skips (or, in CI, fails) t when dir is not a directory.
func requireDir(t testing.TB, dir string, ci bool) {
	t.Helper()
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return
	}
	const what = "shared provider fixtures not found at %s (they live next to the repo in ../shared)"
	if ci {
		t.Fatalf(what+"; CI is set, so the recorded-stream conformance table must run: check out ../shared beside the repo", dir)
		return
	}
	t.Skipf(what+"; skipping the recorded-stream conformance table (with CI set this fails)", dir)
}

// Exchange is one request the server received.
type Exchange struct {
	Method string
	Path   string // with the raw query
	Header http.Header
	Body   []byte
}

// Server serves one recorded response to every request and records the requests.
type Server struct {
	*httptest.Server
	mu        sync.Mutex
	exchanges []Exchange
}

// Requests returns what was received so far.
func (s *Server) Requests() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.exchanges...)
}

// ChunkSize is how many bytes the server writes (and flushes) at a time, so decoders see events
// split across reads at arbitrary points.
const ChunkSize = 61

// Serve starts a server answering every request with the file at path: a .http file is parsed
// with http.ReadResponse (status, headers, body); anything else is sent as a 200
// text/event-stream body, written in ChunkSize pieces with a flush after each.
func Serve(t testing.TB, path string) *Server {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".http") {
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return ServeResponse(t, resp.StatusCode, resp.Header, body)
	}
	h := http.Header{"Content-Type": {"text/event-stream"}}
	return ServeResponse(t, http.StatusOK, h, raw)
}

// ServeResponse starts a server answering every request with status, header and body.
func ServeResponse(t testing.TB, status int, header http.Header, body []byte) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.exchanges = append(s.exchanges, Exchange{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: b})
		s.mu.Unlock()
		for k, vs := range header {
			if strings.EqualFold(k, "Content-Length") {
				continue
			}
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
		f, _ := w.(http.Flusher)
		for rest := body; len(rest) > 0; {
			n := min(ChunkSize, len(rest))
			if _, err := w.Write(rest[:n]); err != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
			rest = rest[n:]
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// Sleeps records the delays a Transport would have slept, without sleeping.
type Sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep is a httpsse.Transport.Sleep that records d and returns at once (or ctx's error).
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// All returns the recorded delays.
func (s *Sleeps) All() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// Transport returns a transport for tests: the default retry policy, no jitter, and sleeps
// recorded in s instead of waited.
func Transport(s *Sleeps) *httpsse.Transport {
	return &httpsse.Transport{
		Doer:   &http.Client{},
		Sleep:  s.Sleep,
		Jitter: func(d time.Duration) time.Duration { return d },
	}
}

// ToolCall is a completed tool call in an Outcome.
type ToolCall struct {
	Index     int
	ID        string
	Name      string
	Args      any // the parsed JSON arguments
	RawArgs   string
	Signature string
	// ArgsFromDeltas is the concatenation of the call's ToolCallArgsDelta fragments.
	ArgsFromDeltas string
}

// Outcome is a normalized summary of one stream.
type Outcome struct {
	Text               string
	TextDeltas         int
	Thinking           string
	ThinkingSignatures []string // the non-empty signatures, in order
	Redacted           []string // opaque redacted-thinking payloads, in order
	ToolCalls          []ToolCall
	Usage              providers.Usage
	UsageEvents        int
	Stop               providers.StopReason // set when Completed
	Err                *providers.Error     // set when Failed
	Notices            []string
	// DroppedCalls counts started tool calls a notice reported as dropped.
	DroppedCalls int
	Events       []providers.Event
}

// ErrKind is Err's kind, or "".
func (o Outcome) ErrKind() providers.ErrorKind {
	if o.Err == nil {
		return ""
	}
	return o.Err.Kind
}

// Collect drains seq into an Outcome and checks the stream contract, reporting violations with
// t.Errorf: exactly one terminal event and nothing after it, tool calls started before they are
// completed, every completed call carrying valid JSON arguments and an id.
func Collect(t testing.TB, seq iter.Seq[providers.Event]) Outcome {
	t.Helper()
	var o Outcome
	terminal := 0
	started := map[int]providers.Event{}
	deltas := map[int]*strings.Builder{}
	for ev := range seq {
		o.Events = append(o.Events, ev)
		if terminal > 0 {
			t.Errorf("event %v after the terminal event", ev.Type)
		}
		switch ev.Type {
		case providers.EventTextDelta:
			o.Text += ev.Text
			o.TextDeltas++
		case providers.EventThinkingDelta:
			o.Thinking += ev.Text
			if ev.Signature != "" {
				o.ThinkingSignatures = append(o.ThinkingSignatures, ev.Signature)
			}
			if ev.Redacted != "" {
				o.Redacted = append(o.Redacted, ev.Redacted)
			}
		case providers.EventToolCallStarted:
			if _, dup := started[ev.Index]; dup {
				t.Errorf("tool call index %d started twice", ev.Index)
			}
			if ev.ToolName == "" {
				t.Errorf("tool call %d started without a name", ev.Index)
			}
			started[ev.Index] = ev
			deltas[ev.Index] = &strings.Builder{}
		case providers.EventToolCallArgsDelta:
			b, ok := deltas[ev.Index]
			if !ok {
				t.Errorf("args delta for tool call index %d that was not started", ev.Index)
				continue
			}
			b.WriteString(ev.Text)
		case providers.EventToolCallCompleted:
			st, ok := started[ev.Index]
			if !ok {
				t.Errorf("tool call index %d completed without being started", ev.Index)
			} else if st.ToolCallID != ev.ToolCallID || st.ToolName != ev.ToolName {
				t.Errorf("tool call %d started as %s/%s, completed as %s/%s", ev.Index, st.ToolCallID, st.ToolName, ev.ToolCallID, ev.ToolName)
			}
			if ev.ToolCallID == "" {
				t.Errorf("tool call %d (%s) has no id", ev.Index, ev.ToolName)
			}
			var args any
			if err := json.Unmarshal(ev.Args, &args); err != nil {
				t.Errorf("tool call %d (%s) args are not valid JSON: %q: %v", ev.Index, ev.ToolName, ev.Args, err)
			}
			tc := ToolCall{Index: ev.Index, ID: ev.ToolCallID, Name: ev.ToolName, Args: args, RawArgs: string(ev.Args), Signature: ev.Signature}
			if b := deltas[ev.Index]; b != nil {
				tc.ArgsFromDeltas = b.String()
			}
			o.ToolCalls = append(o.ToolCalls, tc)
			delete(started, ev.Index)
		case providers.EventUsage:
			o.Usage = ev.Usage
			o.UsageEvents++
		case providers.EventCompleted:
			terminal++
			o.Stop = ev.StopReason
		case providers.EventFailed:
			terminal++
			o.Err = ev.Err
			if ev.Err == nil {
				t.Errorf("failed event without an error")
			} else if ev.Err.Message == "" {
				t.Errorf("failed event with an empty user message: %+v", ev.Err)
			}
		case providers.EventNotice:
			o.Notices = append(o.Notices, ev.Text)
			// A notice naming a started call reports that the call was dropped (no name,
			// arguments that are not JSON): it closes the call without completing it.
			if st, ok := started[ev.Index]; ok && ev.ToolCallID != "" && st.ToolCallID == ev.ToolCallID {
				delete(started, ev.Index)
				o.DroppedCalls++
			}
		default:
			t.Errorf("unknown event type %v", ev.Type)
		}
	}
	if terminal != 1 {
		t.Errorf("stream ended with %d terminal events, want exactly 1", terminal)
	}
	if o.Err == nil {
		for i, st := range started {
			t.Errorf("tool call %d (%s) started but never completed", i, st.ToolName)
		}
	}
	ids := map[string]bool{}
	for _, tc := range o.ToolCalls {
		if ids[tc.ID] {
			t.Errorf("tool call id %q used twice", tc.ID)
		}
		ids[tc.ID] = true
	}
	return o
}

// Call is an expected tool call. Args is JSON compared semantically (key order is free). An empty
// ID accepts any (non-empty, distinct) id.
type Call struct {
	Name string
	Args string
	ID   string
	// Signed requires a non-empty Signature on the completed call.
	Signed bool
}

// Expect is the normalized outcome a recorded stream must give. Zero fields are not checked,
// except that Stop and ErrKind are always compared (exactly one of them is set) and ToolCalls is
// compared whenever Text, Stop or ToolCalls is given for a completed stream.
type Expect struct {
	Text           string
	TextPrefix     string
	Thinking       string
	ThinkingPrefix string
	ThinkingLen    int // in runes
	Signed         bool
	Redacted       int
	ToolCalls      []Call
	Stop           providers.StopReason
	ErrKind        providers.ErrorKind
	ErrContains    string // in Message or Detail
	RequestID      string
	RetryAfter     time.Duration
	Usage          *providers.Usage
	// Notices is the number of notices expected (retries); -1 for any.
	Notices int
}

// Check compares o with want and reports every difference.
func Check(t testing.TB, o Outcome, want Expect) {
	t.Helper()
	if want.Stop != o.Stop {
		t.Errorf("stop = %q, want %q", o.Stop, want.Stop)
	}
	if want.ErrKind != o.ErrKind() {
		t.Errorf("error kind = %q (%+v), want %q", o.ErrKind(), o.Err, want.ErrKind)
	}
	if want.Text != "" && o.Text != want.Text {
		t.Errorf("text = %q\nwant   %q", o.Text, want.Text)
	}
	if want.TextPrefix != "" && !strings.HasPrefix(o.Text, want.TextPrefix) {
		t.Errorf("text = %q, want prefix %q", o.Text, want.TextPrefix)
	}
	if want.Text == "" && want.TextPrefix == "" && o.Text != "" {
		t.Errorf("text = %q, want none", o.Text)
	}
	if want.Thinking != "" && o.Thinking != want.Thinking {
		t.Errorf("thinking = %q, want %q", o.Thinking, want.Thinking)
	}
	if want.ThinkingPrefix != "" && !strings.HasPrefix(o.Thinking, want.ThinkingPrefix) {
		t.Errorf("thinking = %q, want prefix %q", o.Thinking, want.ThinkingPrefix)
	}
	if want.ThinkingLen != 0 && len([]rune(o.Thinking)) != want.ThinkingLen {
		t.Errorf("thinking has %d runes, want %d", len([]rune(o.Thinking)), want.ThinkingLen)
	}
	if want.Thinking == "" && want.ThinkingPrefix == "" && want.ThinkingLen == 0 && o.Thinking != "" {
		t.Errorf("thinking = %q, want none", o.Thinking)
	}
	if want.Signed && len(o.ThinkingSignatures) == 0 {
		t.Errorf("no thinking signature, want one")
	}
	if want.Redacted != len(o.Redacted) {
		t.Errorf("%d redacted thinking blocks, want %d", len(o.Redacted), want.Redacted)
	}
	if len(o.ToolCalls) != len(want.ToolCalls) {
		t.Errorf("%d tool calls %+v, want %d", len(o.ToolCalls), o.ToolCalls, len(want.ToolCalls))
	} else {
		for i, wc := range want.ToolCalls {
			gc := o.ToolCalls[i]
			if gc.Name != wc.Name {
				t.Errorf("tool call %d name = %q, want %q", i, gc.Name, wc.Name)
			}
			if wc.ID != "" && gc.ID != wc.ID {
				t.Errorf("tool call %d id = %q, want %q", i, gc.ID, wc.ID)
			}
			var wa any
			if err := json.Unmarshal([]byte(wc.Args), &wa); err != nil {
				t.Fatalf("bad expected args %q: %v", wc.Args, err)
			}
			if !reflect.DeepEqual(gc.Args, wa) {
				t.Errorf("tool call %d (%s) args = %s, want %s", i, gc.Name, gc.RawArgs, wc.Args)
			}
			if wc.Signed && gc.Signature == "" {
				t.Errorf("tool call %d (%s) has no signature, want one", i, gc.Name)
			}
		}
	}
	if want.Usage != nil && o.Usage != *want.Usage {
		t.Errorf("usage = %+v, want %+v", o.Usage, *want.Usage)
	}
	if o.Err != nil {
		if want.ErrContains != "" && !strings.Contains(o.Err.Message+" "+o.Err.Detail, want.ErrContains) {
			t.Errorf("error %q / %q does not mention %q", o.Err.Message, o.Err.Detail, want.ErrContains)
		}
		if want.RequestID != "" && o.Err.RequestID != want.RequestID {
			t.Errorf("request id = %q, want %q", o.Err.RequestID, want.RequestID)
		}
		if want.RetryAfter != 0 && o.Err.RetryAfter != want.RetryAfter {
			t.Errorf("retry after = %v, want %v", o.Err.RetryAfter, want.RetryAfter)
		}
	}
	if want.Notices >= 0 && len(o.Notices) != want.Notices {
		t.Errorf("notices = %q, want %d", o.Notices, want.Notices)
	}
}

// NewFunc builds the dialect under test for a base URL and a test transport.
type NewFunc func(cfg providers.Config, tr *httpsse.Transport) (providers.Provider, error)

// Replay serves the recorded file at path, streams req through the provider newFn builds against
// it (with a test transport that records instead of sleeping) and returns the outcome with the
// server, for request assertions.
func Replay(t testing.TB, newFn NewFunc, cfg providers.Config, path string, req *providers.Request) (Outcome, *Server, *Sleeps) {
	t.Helper()
	srv := Serve(t, path)
	cfg.BaseURL = srv.URL
	sl := &Sleeps{}
	p, err := newFn(cfg, Transport(sl))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := Collect(t, p.Stream(ctx, req))
	return o, srv, sl
}

// Case is one row of a conformance table.
type Case struct {
	File string // relative to the table's directory
	Want Expect
}

// Run replays every case in dir as a subtest and checks its outcome. Files in dir that no case
// names fail the table, so a new recording cannot be silently left out.
func Run(t *testing.T, dir string, newFn NewFunc, cfg providers.Config, req *providers.Request, cases []Case) {
	t.Helper()
	named := map[string]bool{}
	for _, c := range cases {
		named[c.File] = true
		t.Run(c.File, func(t *testing.T) {
			o, _, _ := Replay(t, newFn, cfg, filepath.Join(dir, c.File), req)
			Check(t, o, c.Want)
			if t.Failed() {
				t.Logf("events:\n%s", Dump(o.Events))
			}
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if (strings.HasSuffix(n, ".sse") || strings.HasSuffix(n, ".http")) && !named[n] {
			t.Errorf("%s has no row in the conformance table", filepath.Join(dir, n))
		}
	}
}

// Dump renders events one per line, for failure logs.
func Dump(evs []providers.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "  %-20s", ev.Type)
		switch ev.Type {
		case providers.EventTextDelta, providers.EventThinkingDelta, providers.EventNotice, providers.EventToolCallArgsDelta:
			fmt.Fprintf(&b, " %q", ev.Text)
		}
		if ev.ToolName != "" || ev.ToolCallID != "" {
			fmt.Fprintf(&b, " #%d %s %s %s", ev.Index, ev.ToolCallID, ev.ToolName, ev.Args)
		}
		if ev.Signature != "" {
			fmt.Fprintf(&b, " sig=%.12s…", ev.Signature)
		}
		if ev.Type == providers.EventUsage {
			fmt.Fprintf(&b, " %+v", ev.Usage)
		}
		if ev.Type == providers.EventCompleted {
			fmt.Fprintf(&b, " %s", ev.StopReason)
		}
		if ev.Err != nil {
			fmt.Fprintf(&b, " %s %q detail=%q status=%d", ev.Err.Kind, ev.Err.Message, ev.Err.Detail, ev.Err.Status)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
