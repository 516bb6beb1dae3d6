package httpsse_test

import (
	"context"
	"errors"
	"fmt"
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

// scripted answers the n-th request with responses[n] (the last one repeats).
func scripted(t *testing.T, responses ...func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i >= len(responses) {
			i = len(responses) - 1
		}
		responses[i](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func status(code int, header map[string]string, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

func sseOK(body string) func(http.ResponseWriter, *http.Request) {
	return status(200, map[string]string{"Content-Type": "text/event-stream"}, body)
}

func open(t *testing.T, tr *httpsse.Transport, url string) (*httpsse.Stream, *providers.Error, []string) {
	t.Helper()
	var notices []string
	s, err := tr.Open(context.Background(), &httpsse.Call{
		Provider: "Acme", URL: url, Body: []byte(`{}`),
		Notice: func(text string) bool { notices = append(notices, text); return true },
	})
	if s != nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err, notices
}

func TestRetryHonoursRetryAfterAndAnnouncesIt(t *testing.T) {
	srv, n := scripted(t,
		status(429, map[string]string{"Retry-After": "8"}, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`),
		status(529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		status(503, map[string]string{"retry-after-ms": "1500"}, `upstream unavailable`),
		sseOK("data: hi\n\n"),
	)
	sl := &providertest.Sleeps{}
	s, err, notices := open(t, providertest.Transport(sl), srv.URL)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	want := []string{"rate limited, retrying in 8 s", "overloaded, retrying in 2 s", "overloaded, retrying in 2 s"}
	if fmt.Sprint(notices) != fmt.Sprint(want) {
		t.Errorf("notices = %q, want %q", notices, want)
	}
	// 8 s from Retry-After, 2 s from the backoff (second retry, 1 s base doubled), 1.5 s from
	// retry-after-ms.
	if got := fmt.Sprint(sl.All()); got != "[8s 2s 1.5s]" {
		t.Errorf("sleeps = %s", got)
	}
	var data []string
	for ev := range s.Events() {
		data = append(data, string(ev.Data))
	}
	if fmt.Sprint(data) != "[hi]" || s.Err() != nil || n.Load() != 4 {
		t.Errorf("data = %q err = %v requests = %d", data, s.Err(), n.Load())
	}
}

func TestBackoffIsCappedAndAttemptsBounded(t *testing.T) {
	srv, n := scripted(t, status(500, nil, `{"error":{"message":"boom","type":"server_error"}}`))
	sl := &providertest.Sleeps{}
	tr := providertest.Transport(sl)
	tr.Retry = httpsse.Retry{MaxAttempts: 6, Base: time.Second, Max: 4 * time.Second}
	_, err, notices := open(t, tr, srv.URL)
	if err == nil || err.Kind != providers.ErrServer || err.Status != 500 {
		t.Fatalf("err = %+v", err)
	}
	if got := fmt.Sprint(sl.All()); got != "[1s 2s 4s 4s 4s]" {
		t.Errorf("sleeps = %s", got)
	}
	if n.Load() != 6 || len(notices) != 5 || notices[0] != "server error (HTTP 500), retrying in 1 s" {
		t.Errorf("requests = %d notices = %q", n.Load(), notices)
	}
}

func TestDefaultJitterStaysInRange(t *testing.T) {
	srv, _ := scripted(t, status(529, nil, ``))
	sl := &providertest.Sleeps{}
	tr := &httpsse.Transport{Sleep: sl.Sleep, Retry: httpsse.Retry{MaxAttempts: 4}}
	open(t, tr, srv.URL)
	for i, d := range sl.All() {
		hi := time.Second << i
		if d < hi/2 || d >= hi {
			t.Errorf("retry %d slept %v, want in [%v, %v)", i+1, d, hi/2, hi)
		}
	}
}

func TestNoRetryForPermanentErrors(t *testing.T) {
	for _, c := range []struct {
		code int
		body string
		kind providers.ErrorKind
	}{
		{401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, providers.ErrAuth},
		{429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`, providers.ErrQuota},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`, providers.ErrContextOverflow},
		{404, `{"error":{"code":404,"message":"models/nope is not found","status":"NOT_FOUND"}}`, providers.ErrNotFound},
	} {
		srv, n := scripted(t, status(c.code, nil, c.body))
		sl := &providertest.Sleeps{}
		_, err, notices := open(t, providertest.Transport(sl), srv.URL)
		if err == nil || err.Kind != c.kind || n.Load() != 1 || len(notices) != 0 {
			t.Errorf("%d: err = %+v requests = %d notices = %q", c.code, err, n.Load(), notices)
		}
	}
}

func TestServerDelayLongerThanMaxWaitIsNotWaited(t *testing.T) {
	srv, n := scripted(t, status(429, map[string]string{"Retry-After": "3600"}, `{"error":{"message":"later","type":"requests","code":"rate_limit_exceeded"}}`))
	_, err, notices := open(t, providertest.Transport(&providertest.Sleeps{}), srv.URL)
	if err == nil || err.Kind != providers.ErrRateLimit || err.RetryAfter != time.Hour || n.Load() != 1 || len(notices) != 0 {
		t.Fatalf("err = %+v requests = %d notices = %q", err, n.Load(), notices)
	}
	if !strings.Contains(err.Message, "60 min") {
		t.Errorf("message %q does not say how long to wait", err.Message)
	}
}

type failingDoer struct{ n atomic.Int32 }

func (d *failingDoer) Do(*http.Request) (*http.Response, error) {
	d.n.Add(1)
	return nil, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
}

func TestNetworkErrorsAreRetriedThenReported(t *testing.T) {
	d := &failingDoer{}
	sl := &providertest.Sleeps{}
	tr := providertest.Transport(sl)
	tr.Doer = d
	_, err, notices := open(t, tr, "http://127.0.0.1:1/x")
	if err == nil || err.Kind != providers.ErrNetwork || d.n.Load() != 4 {
		t.Fatalf("err = %+v attempts = %d", err, d.n.Load())
	}
	if notices[0] != "connection failed, retrying in 1 s" || !strings.Contains(err.Message, "connection refused") {
		t.Errorf("notices = %q message = %q", notices, err.Message)
	}
}

func TestNoticeConsumerLeavingCancels(t *testing.T) {
	srv, n := scripted(t, status(529, nil, ``))
	tr := providertest.Transport(&providertest.Sleeps{})
	_, err := tr.Open(context.Background(), &httpsse.Call{URL: srv.URL, Body: []byte(`{}`), Notice: func(string) bool { return false }})
	if err == nil || err.Kind != providers.ErrCancelled || n.Load() != 1 {
		t.Fatalf("err = %+v requests = %d", err, n.Load())
	}
}

func TestSuccessStatusWithErrorBody(t *testing.T) {
	cases := []struct {
		name, ct, body string
		kind           providers.ErrorKind
		retried        bool
	}{
		{"json error object", "application/json", `{"error":{"message":"Invalid model","type":"invalid_request_error","param":"model"}}`, providers.ErrInvalidRequest, false},
		{"gemini array error", "application/json", `[{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]`, providers.ErrOverloaded, true},
		{"error object as event-stream", "text/event-stream", "\n{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}", providers.ErrOverloaded, true},
		{"html page", "text/html", "<!DOCTYPE html><html><head><title>Captive Portal</title></head></html>", providers.ErrServer, false},
		{"plain completion", "application/json", `{"id":"x","choices":[]}`, providers.ErrInvalidRequest, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, n := scripted(t, status(200, map[string]string{"Content-Type": c.ct}, c.body))
			tr := providertest.Transport(&providertest.Sleeps{})
			tr.Retry.MaxAttempts = 2
			_, err, _ := open(t, tr, srv.URL)
			if err == nil || err.Kind != c.kind {
				t.Fatalf("err = %+v, want kind %s", err, c.kind)
			}
			if want := map[bool]int32{true: 2, false: 1}[c.retried]; n.Load() != want {
				t.Errorf("requests = %d, want %d", n.Load(), want)
			}
			if err.Message == "" || strings.Contains(err.Message, "\n") {
				t.Errorf("message %q is not one readable sentence", err.Message)
			}
		})
	}
}

func TestHTMLErrorPageFromProxy(t *testing.T) {
	srv, _ := scripted(t, status(502, map[string]string{"Content-Type": "text/html"}, "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"))
	tr := providertest.Transport(&providertest.Sleeps{})
	tr.Retry.MaxAttempts = 1
	_, err, _ := open(t, tr, srv.URL)
	if err == nil || err.Kind != providers.ErrServer || err.Detail != "502 Bad Gateway" || !strings.Contains(err.Message, "HTML page") {
		t.Fatalf("err = %+v", err)
	}
}

func TestLargeEventsAndTheLimit(t *testing.T) {
	big := strings.Repeat("x", 100<<10) // over go-sse's 64 KiB default
	srv, _ := scripted(t, sseOK("data: "+big+"\n\ndata: after\n\n"))
	s, err, _ := open(t, providertest.Transport(&providertest.Sleeps{}), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for ev := range s.Events() {
		sizes = append(sizes, len(ev.Data))
	}
	if fmt.Sprint(sizes) != fmt.Sprint([]int{100 << 10, 5}) || s.Err() != nil {
		t.Fatalf("sizes = %v err = %v", sizes, s.Err())
	}

	tr := providertest.Transport(&providertest.Sleeps{})
	tr.MaxEventSize = 32 << 10
	s, err, _ = open(t, tr, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for range s.Events() {
		t.Error("got an event past the limit")
	}
	if s.Err() == nil || s.Err().Kind != providers.ErrServer || !strings.Contains(s.Err().Message, "limit") {
		t.Fatalf("err = %+v", s.Err())
	}
}

func TestCancelMidStreamAndCloseReleaseTheConnection(t *testing.T) {
	hangUp := providertest.NewHangUp()
	srv := httptest.NewServer(hangUp.Handler("data: one\n\n"))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := (&httpsse.Transport{}).Open(ctx, &httpsse.Call{URL: srv.URL, Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []string
	for ev := range s.Events() {
		got = append(got, string(ev.Data))
		cancel()
	}
	if fmt.Sprint(got) != "[one]" || s.Err() == nil || s.Err().Kind != providers.ErrCancelled {
		t.Fatalf("got %q err %+v", got, s.Err())
	}
	hangUp.Wait(t)
}

func TestBreakingOutAndClosingHangsUp(t *testing.T) {
	hangUp := providertest.NewHangUp()
	srv := httptest.NewServer(hangUp.Handler("data: one\n\n"))
	defer srv.Close()
	s, err := (&httpsse.Transport{}).Open(context.Background(), &httpsse.Call{URL: srv.URL, Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	for range s.Events() {
		break
	}
	s.Close()
	hangUp.Wait(t)
}

func TestFetchReturnsBodyAndClassifies(t *testing.T) {
	srv, _ := scripted(t, status(401, nil, `{"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}`), status(200, nil, `{"data":[]}`))
	tr := providertest.Transport(&providertest.Sleeps{})
	_, err := tr.Fetch(context.Background(), &httpsse.Call{Provider: "Gemini", URL: srv.URL})
	if err == nil || err.Kind != providers.ErrAuth {
		t.Fatalf("err = %+v", err)
	}
	b, err := tr.Fetch(context.Background(), &httpsse.Call{URL: srv.URL})
	if err != nil || string(b) != `{"data":[]}` {
		t.Fatalf("b = %q err = %+v", b, err)
	}
}

func TestRequestCarriesHeadersAndBody(t *testing.T) {
	var got *http.Request
	srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request) { got = r; sseOK("data: x\n\n")(w, r) })
	s, err := providertest.Transport(&providertest.Sleeps{}).Open(context.Background(), &httpsse.Call{
		URL: srv.URL + "/v1/x?alt=sse", Header: http.Header{"X-Api-Key": {"k"}}, Body: []byte(`{"a":1}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got.Method != "POST" || got.Header.Get("X-Api-Key") != "k" || got.Header.Get("Accept") != "text/event-stream" ||
		got.Header.Get("Content-Type") != "application/json" || got.URL.RequestURI() != "/v1/x?alt=sse" {
		t.Fatalf("request = %s %s %v", got.Method, got.URL, got.Header)
	}
}

// silentServer accepts each request and then says nothing (optionally after the headers of a
// 200 stream) until the client hangs up or the test ends.
func silentServer(t *testing.T, headers bool) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		if headers {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: no handler outlives the test
	return srv
}

// countingDoer counts the requests the transport sends.
type countingDoer struct {
	httpsse.Doer
	n atomic.Int32
}

func (d *countingDoer) Do(r *http.Request) (*http.Response, error) {
	d.n.Add(1)
	return d.Doer.Do(r)
}

// instantClock is a Transport.After whose waits all end at once; it records what they were.
type instantClock struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (c *instantClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

// A server that accepts the request and says nothing: the call waits up to the first-byte limit
// (2 min by default) with a notice at 10, 30, 60 and 90 s, retries once, and fails saying what
// to do, instead of waiting out the idle watchdog four times (20 min).
func TestSilentServerFailsAtTheFirstByteLimitAfterOneRetry(t *testing.T) {
	for _, headers := range []bool{false, true} {
		t.Run(fmt.Sprintf("headers=%v", headers), func(t *testing.T) {
			srv := silentServer(t, headers)
			sl := &providertest.Sleeps{}
			tr := providertest.Transport(sl)
			doer := &countingDoer{Doer: tr.Doer}
			clock := &instantClock{}
			tr.Doer, tr.After = doer, clock.After
			_, err, notices := open(t, tr, srv.URL)
			if err == nil || err.Kind != providers.ErrNetwork || !strings.Contains(err.Message, "did not start answering within 2 min") ||
				!strings.Contains(err.Message, "firstByteTimeout") {
				t.Fatalf("err = %+v", err)
			}
			if doer.n.Load() != 2 {
				t.Errorf("requests = %d, want 2 (one retry)", doer.n.Load())
			}
			wait := []string{
				"waiting for the model server to answer… 10 s", "waiting for the model server to answer… 30 s",
				"waiting for the model server to answer… 60 s", "waiting for the model server to answer… 90 s",
			}
			want := append(append(append([]string{}, wait...), "no answer from the model server, retrying in 1 s"), wait...)
			if fmt.Sprint(notices) != fmt.Sprint(want) {
				t.Errorf("notices =\n%q\nwant\n%q", notices, want)
			}
			// Each attempt's waits add up to the limit.
			if got := fmt.Sprint(clock.waits); got != "[10s 20s 30s 30s 30s 10s 20s 30s 30s 30s]" {
				t.Errorf("waits = %s", got)
			}
		})
	}
}

func TestFirstByteLimitIsASetting(t *testing.T) {
	srv := silentServer(t, false)
	tr := providertest.Transport(&providertest.Sleeps{})
	clock := &instantClock{}
	tr.After = clock.After
	tr.Retry.MaxAttempts = 1
	tr = httpsse.Configured(tr, providers.Config{FirstByteTimeout: 45 * time.Second})
	_, err, notices := open(t, tr, srv.URL)
	if err == nil || !strings.Contains(err.Message, "within 45 s") {
		t.Fatalf("err = %+v", err)
	}
	if fmt.Sprint(notices) != `[waiting for the model server to answer… 10 s waiting for the model server to answer… 30 s]` {
		t.Errorf("notices = %q", notices)
	}
	if got := fmt.Sprint(clock.waits); got != "[10s 20s 15s]" {
		t.Errorf("waits = %s", got)
	}
	// Without the setting, the transport keeps its own limit.
	if tr2 := providertest.Transport(nil); httpsse.Configured(tr2, providers.Config{}) != tr2 {
		t.Error("Configured copied a transport it had nothing to change in")
	}
}

// A long wait is announced in minutes past two minutes; a negative limit waits as long as the
// context allows.
func TestWaitingNoticesPastTwoMinutes(t *testing.T) {
	srv := silentServer(t, false)
	tr := providertest.Transport(&providertest.Sleeps{})
	tr.After = (&instantClock{}).After
	tr.FirstByteTimeout = -1
	var notices []string
	_, err := tr.Open(context.Background(), &httpsse.Call{URL: srv.URL, Body: []byte(`{}`), Notice: func(text string) bool {
		notices = append(notices, strings.TrimPrefix(text, "waiting for the model server to answer… "))
		return len(notices) < 8 // then the consumer leaves
	}})
	if err == nil || err.Kind != providers.ErrCancelled {
		t.Fatalf("err = %+v", err)
	}
	if got := fmt.Sprint(notices); got != "[10 s 30 s 60 s 90 s 2 min 2 min 30 s 3 min 3 min 30 s]" {
		t.Errorf("notices = %s", got)
	}
}

// Cancel ends the wait for a silent server at once, as it ends a stream.
func TestCancelWhileWaitingForTheFirstByte(t *testing.T) {
	arrived := make(chan struct{}, 4)
	hangUp := providertest.NewHangUp()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // lets the server notice the client hanging up
		arrived <- struct{}{}
		<-r.Context().Done()
		hangUp.Handler("")(w, r) // records the hang-up (its context is already done)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *providers.Error, 1)
	go func() {
		_, err := (&httpsse.Transport{}).Open(ctx, &httpsse.Call{URL: srv.URL, Body: []byte(`{}`)})
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; err == nil || err.Kind != providers.ErrCancelled {
		t.Fatalf("err = %+v", err)
	}
	hangUp.Wait(t)
}

// Once the server has answered, the idle watchdog guards each read: a stall before the stream is
// recognised (here, after a blank line) is retried once, a stall mid-stream ends the stream.
func TestIdleWatchdogBeforeAndAfterTheStreamStarts(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // lets the server notice the client hanging up
		w.Header().Set("Content-Type", "text/event-stream")
		if n.Add(1) <= 2 {
			fmt.Fprint(w, "\n") // stalls before the first event
		} else {
			fmt.Fprint(w, "data: one\n\n")
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release) // runs first: no handler outlives the test
	sl := &providertest.Sleeps{}
	tr := providertest.Transport(sl)
	tr.IdleTimeout = 50 * time.Millisecond
	_, err, notices := open(t, tr, srv.URL)
	if err == nil || err.Kind != providers.ErrNetwork || !strings.Contains(err.Message, "sent nothing for 50 ms") {
		t.Fatalf("err = %+v notices = %q", err, notices)
	}
	if n.Load() != 2 || fmt.Sprint(notices) != "[no answer from the model server, retrying in 1 s]" {
		t.Fatalf("requests = %d, want 2 (one retry); notices = %q", n.Load(), notices)
	}
	s, err, _ := open(t, tr, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev := range s.Events() {
		got = append(got, string(ev.Data))
	}
	if fmt.Sprint(got) != "[one]" || s.Err() == nil || s.Err().Kind != providers.ErrNetwork || !strings.Contains(s.Err().Message, "sent nothing") {
		t.Fatalf("got %q err %+v", got, s.Err())
	}
}

func TestSteadyTrickleIsNotIdle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 6; i++ {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond) // the server's pace, not a synchronization
		}
	}))
	defer srv.Close()
	tr := providertest.Transport(&providertest.Sleeps{})
	tr.IdleTimeout = 150 * time.Millisecond
	s, err, _ := open(t, tr, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev := range s.Events() {
		got = append(got, string(ev.Data))
	}
	if len(got) != 6 || s.Err() != nil {
		t.Fatalf("got %q err %+v", got, s.Err())
	}
}

// completed is an emitter whose stream ended with Completed, as a dialect's is once it has read
// its end marker.
func completed() *providers.Emitter {
	em := providers.NewEmitter(func(providers.Event) bool { return true })
	em.Complete(providers.StopEndTurn)
	return em
}

func TestReleaseAfterACompletedAnswerKeepsTheConnection(t *testing.T) {
	var conns atomic.Int32
	finish := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
		w.(http.Flusher).Flush()
		// The chunked encoding's end leaves once the client has read the end marker, as from a
		// server that flushes each event: the dialect's last read is not the one that sees EOF.
		<-finish
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	tr := &httpsse.Transport{Doer: &http.Client{Transport: &http.Transport{}}}
	for i := range 3 {
		s, err := tr.Open(context.Background(), &httpsse.Call{URL: srv.URL, Body: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for ev := range s.Events() {
			got = append(got, string(ev.Data))
			if string(ev.Data) == "[DONE]" {
				break // as a dialect stops at its end marker
			}
		}
		if fmt.Sprint(got) != "[one [DONE]]" {
			t.Fatalf("call %d: events %q", i, got)
		}
		finish <- struct{}{}
		s.Release(completed())
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("three calls in a row dialled %d connections, want 1", n)
	}
}

func TestReleaseOfAStreamLeftEarlyHangsUp(t *testing.T) {
	for name, em := range map[string]*providers.Emitter{
		// The consumer went (or the stream failed): nothing is read, the connection is closed.
		"not completed": providers.NewEmitter(func(providers.Event) bool { return true }),
		// A server that goes on sending after the end marker: the bounded read gives up on it.
		"completed, server still sending": completed(),
		"no emitter":                      nil,
	} {
		t.Run(name, func(t *testing.T) {
			hangUp := providertest.NewHangUp()
			srv := httptest.NewServer(hangUp.Handler("data: one\n\n"))
			defer srv.Close()
			s, err := (&httpsse.Transport{}).Open(context.Background(), &httpsse.Call{URL: srv.URL, Body: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			for range s.Events() {
				break
			}
			s.Release(em)
			hangUp.Wait(t)
		})
	}
}
