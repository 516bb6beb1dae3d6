// Package httpsse is the one HTTP + Server-Sent-Events transport every provider dialect shares. It
// sends a request through a Doer (an *http.Client, or anything tests put in its place), checks the
// status, reads and classifies error bodies (bounded), retries transient failures that happen
// before the first byte of the stream with capped exponential backoff and jitter (honouring
// Retry-After, retry-after-ms and Google's RetryInfo, and announcing each retry as a notice), and
// hands the dialect an iterator over SSE events parsed by github.com/tmaxmax/go-sse with the event
// size limit raised. It knows nothing of any provider's JSON: deciding that a stream ended without
// its end marker is the dialect's job (go-sse reports EOF as success).
package httpsse

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/agentd-dev/agentd/providers"
	sse "github.com/tmaxmax/go-sse"
)

// Doer sends one HTTP request; *http.Client implements it.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Retry is the backoff policy for failures before the stream starts.
type Retry struct {
	// MaxAttempts counts the first try; 1 disables retries. 0 means 4.
	MaxAttempts int
	// Base is the first backoff (doubled each retry), Max caps it. 0 means 1 s and 30 s.
	Base, Max time.Duration
	// MaxWait is the longest server-requested delay honoured; a longer Retry-After ends the
	// retries and the error reaches the user with its delay. 0 means 60 s.
	MaxWait time.Duration
}

// Defaults for Transport fields left zero.
const (
	DefaultMaxEventSize = 16 << 20
	DefaultMaxErrorBody = 64 << 10
	DefaultMaxFetchBody = 8 << 20
	// DefaultIdleTimeout ends a call that received no byte for this long (a stalled proxy or
	// connection); providers ping or stream well within it, even while a model thinks.
	DefaultIdleTimeout = 5 * time.Minute
)

// Transport is safe for concurrent use once configured. The zero value works: it uses an
// *http.Client without a timeout (calls are bounded by their context) and real sleeps.
type Transport struct {
	Doer  Doer
	Retry Retry
	// Sleep waits d or until ctx ends; tests inject one that records and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter spreads a computed backoff d; nil picks uniformly in [d/2, d).
	Jitter func(d time.Duration) time.Duration
	// MaxEventSize bounds one SSE event (go-sse's default is 64 KiB, too small for some
	// providers' events). 0 means DefaultMaxEventSize.
	MaxEventSize int
	// MaxErrorBody bounds how much of an error body is read. 0 means DefaultMaxErrorBody.
	MaxErrorBody int
	// IdleTimeout is how long a call may go without receiving a byte, headers included, before
	// it fails as a network error (retried when the stream has not started). 0 means
	// DefaultIdleTimeout; a negative value disables the watchdog.
	IdleTimeout time.Duration
}

// New returns a Transport with the default policy over a fresh *http.Client.
func New() *Transport { return &Transport{Doer: &http.Client{}} }

// Call is one request.
type Call struct {
	// Provider names the provider in user-facing messages ("Anthropic").
	Provider string
	// Method defaults to POST when Body is set, GET otherwise.
	Method string
	URL    string
	Header http.Header
	Body   []byte
	// Classify overrides providers.ClassifyResponse for this dialect's error bodies.
	Classify func(status int, h http.Header, body []byte) *providers.Error
	// Notice is called before each retry with a line such as "rate limited, retrying in 8 s". If
	// it returns false (the consumer left) the call ends as cancelled.
	Notice func(text string) bool
}

// Stream is an open event stream. Close it (closing the socket) when done.
type Stream struct {
	resp     *http.Response
	br       *bufio.Reader
	ctx      context.Context
	wd       *watchdog
	provider string
	maxEvent int
	err      *providers.Error
}

// Header is the response header (request ids, rate-limit headers).
func (s *Stream) Header() http.Header { return s.resp.Header }

// Close closes the response body, and with it the connection if the stream was not drained.
func (s *Stream) Close() error {
	err := s.resp.Body.Close()
	s.wd.stop()
	return err
}

// Events yields the stream's SSE events. Iteration stops at EOF without an error (the dialect
// decides whether its end marker was seen) or at the first read error, which Err then returns
// classified: cancelled when ctx ended, a protocol error for an oversized event, network otherwise.
func (s *Stream) Events() iter.Seq[sse.Event] {
	return func(yield func(sse.Event) bool) {
		for ev, err := range sse.Read(s.br, &sse.ReadConfig{MaxEventSize: s.maxEvent}) {
			if err != nil {
				s.err = s.classifyReadErr(err)
				return
			}
			if !yield(ev) {
				return
			}
		}
		if s.ctx.Err() != nil && s.err == nil {
			s.err = providers.Cancelled()
		}
	}
}

// Err is the read error that ended Events early, nil after a clean EOF.
func (s *Stream) Err() *providers.Error { return s.err }

func (s *Stream) classifyReadErr(err error) *providers.Error {
	if s.wd.stalled.Load() {
		return s.wd.err(s.provider)
	}
	if s.ctx.Err() != nil {
		return providers.Cancelled()
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return providers.ProtocolError(s.provider, fmt.Sprintf("an event exceeded the %d-byte limit", s.maxEvent))
	}
	return providers.NetworkError(s.ctx, s.provider, err)
}

// Bytes views s as a byte slice without copying, for json.Unmarshal of event data. The slice
// must not be modified.
func Bytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// Open sends c and returns the event stream once a 2xx response with a plausible stream body
// has arrived. Failures before that point are classified, and retried when transient.
func (t *Transport) Open(ctx context.Context, c *Call) (*Stream, *providers.Error) {
	var s *Stream
	err := t.retry(ctx, c, func() *providers.Error {
		var perr *providers.Error
		s, perr = t.openOnce(ctx, c)
		return perr
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Fetch sends c and returns the whole 2xx body (bounded at DefaultMaxFetchBody), with the same
// classification and retries as Open. It serves model listings.
func (t *Transport) Fetch(ctx context.Context, c *Call) ([]byte, *providers.Error) {
	var body []byte
	err := t.retry(ctx, c, func() *providers.Error {
		resp, wd, perr := t.send(ctx, c, false)
		if perr != nil {
			return perr
		}
		defer wd.stop()
		defer resp.Body.Close()
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, DefaultMaxFetchBody))
		if rerr != nil {
			if wd.stalled.Load() {
				return wd.err(c.Provider)
			}
			return providers.NetworkError(ctx, c.Provider, rerr)
		}
		body = b
		return nil
	})
	return body, err
}

func (t *Transport) retry(ctx context.Context, c *Call, once func() *providers.Error) *providers.Error {
	p := t.policy()
	for attempt := 1; ; attempt++ {
		err := once()
		if err == nil {
			return nil
		}
		if err.Kind == providers.ErrCancelled || ctx.Err() != nil {
			return providers.Cancelled()
		}
		if !err.Retryable() || attempt >= p.MaxAttempts {
			return err
		}
		delay := t.backoff(p, attempt, err.RetryAfter)
		if delay < 0 {
			return err
		}
		if c.Notice != nil && !c.Notice(noticeText(err, delay)) {
			return providers.Cancelled()
		}
		if serr := t.sleep(ctx, delay); serr != nil {
			return providers.Cancelled()
		}
	}
}

func (t *Transport) policy() Retry {
	p := t.Retry
	if p.MaxAttempts == 0 {
		p.MaxAttempts = 4
	}
	if p.Base == 0 {
		p.Base = time.Second
	}
	if p.Max == 0 {
		p.Max = 30 * time.Second
	}
	if p.MaxWait == 0 {
		p.MaxWait = 60 * time.Second
	}
	return p
}

// backoff is the delay before retry number attempt (1-based): the server's delay when it gave
// one (or -1 when that is longer than the policy honours), otherwise Base·2^(attempt-1) capped
// at Max, jittered.
func (t *Transport) backoff(p Retry, attempt int, serverDelay time.Duration) time.Duration {
	if serverDelay > 0 {
		if serverDelay > p.MaxWait {
			return -1
		}
		return serverDelay
	}
	d := p.Base
	for i := 1; i < attempt && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	if t.Jitter != nil {
		return t.Jitter(d)
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}

func (t *Transport) sleep(ctx context.Context, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(ctx, d)
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

func noticeText(err *providers.Error, d time.Duration) string {
	what := "request failed"
	switch err.Kind {
	case providers.ErrRateLimit:
		what = "rate limited"
	case providers.ErrOverloaded:
		what = "overloaded"
	case providers.ErrServer:
		what = fmt.Sprintf("server error (HTTP %d)", err.Status)
	case providers.ErrNetwork:
		what = "connection failed"
	}
	return what + ", retrying in " + providers.HumanDuration(d)
}

func (t *Transport) doer() Doer {
	if t.Doer != nil {
		return t.Doer
	}
	return http.DefaultClient
}

// send performs one exchange and returns a 2xx response, its body watched for stalls by the
// returned watchdog (which the caller stops), or the classified failure with the error body read
// (bounded) and the response closed.
func (t *Transport) send(ctx context.Context, c *Call, stream bool) (*http.Response, *watchdog, *providers.Error) {
	method := c.Method
	if method == "" {
		method = http.MethodGet
		if c.Body != nil {
			method = http.MethodPost
		}
	}
	var body io.Reader
	if c.Body != nil {
		body = bytes.NewReader(c.Body)
	}
	rctx, cancel := context.WithCancel(ctx)
	wd := newWatchdog(t.IdleTimeout, cancel)
	req, err := http.NewRequestWithContext(rctx, method, c.URL, body)
	if err != nil {
		wd.stop()
		return nil, nil, &providers.Error{Kind: providers.ErrInvalidRequest, Detail: err.Error(),
			Message: fmt.Sprintf("The %s URL %q is not valid; check the base URL.", nameOr(c.Provider), c.URL)}
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	if c.Body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if stream && req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := t.doer().Do(req)
	if err != nil {
		wd.stop()
		if wd.stalled.Load() {
			return nil, nil, wd.err(c.Provider)
		}
		return nil, nil, providers.NetworkError(ctx, c.Provider, err)
	}
	wd.kick()
	resp.Body = &idleBody{ReadCloser: resp.Body, wd: wd}
	if resp.StatusCode/100 == 2 {
		return resp, wd, nil
	}
	defer wd.stop()
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, int64(t.maxErrorBody())))
	return nil, nil, t.classify(c, resp.StatusCode, resp.Header, b)
}

// watchdog cancels a call that has received nothing for its idle time.
type watchdog struct {
	idle    time.Duration
	timer   *time.Timer
	cancel  context.CancelFunc
	stalled atomic.Bool
}

func newWatchdog(idle time.Duration, cancel context.CancelFunc) *watchdog {
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	w := &watchdog{idle: idle, cancel: cancel}
	if idle > 0 {
		w.timer = time.AfterFunc(idle, func() {
			w.stalled.Store(true)
			cancel()
		})
	}
	return w
}

// kick restarts the idle clock; it runs on every read that got bytes.
func (w *watchdog) kick() {
	if w.timer != nil {
		w.timer.Reset(w.idle)
	}
}

// stop ends the watch and releases the call's context.
func (w *watchdog) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.cancel()
}

func (w *watchdog) err(who string) *providers.Error {
	d := providers.HumanDuration(w.idle)
	return &providers.Error{Kind: providers.ErrNetwork, Detail: "no data for " + d,
		Message: fmt.Sprintf("%s sent nothing for %s, so the connection was dropped; check the network or proxy and try again.", c0(who), d)}
}

func c0(who string) string {
	if who == "" {
		return "The provider"
	}
	return who
}

// idleBody kicks the watchdog whenever a read returns bytes.
type idleBody struct {
	io.ReadCloser
	wd *watchdog
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.wd.kick()
	}
	return n, err
}

func (t *Transport) classify(c *Call, status int, h http.Header, body []byte) *providers.Error {
	if c.Classify != nil {
		return c.Classify(status, h, body)
	}
	return providers.ClassifyResponse(c.Provider, status, h, body)
}

func (t *Transport) maxErrorBody() int {
	if t.MaxErrorBody > 0 {
		return t.MaxErrorBody
	}
	return DefaultMaxErrorBody
}

// openOnce sends c and sniffs the first bytes of a 2xx body: a stream never starts with '{', '['
// or '<', so such a body is an error object or an HTML page served with a success status, and it
// is classified (and possibly retried) like any other failure before the stream.
func (t *Transport) openOnce(ctx context.Context, c *Call) (*Stream, *providers.Error) {
	resp, wd, perr := t.send(ctx, c, true)
	if perr != nil {
		return nil, perr
	}
	br := bufio.NewReaderSize(resp.Body, 4096)
	first := byte(0)
	for i := 1; i <= 64; i++ {
		b, err := br.Peek(i)
		if len(b) < i {
			if err != nil && !errors.Is(err, io.EOF) {
				resp.Body.Close()
				wd.stop()
				if wd.stalled.Load() {
					return nil, wd.err(c.Provider)
				}
				return nil, providers.NetworkError(ctx, c.Provider, err)
			}
			break
		}
		ch := b[i-1]
		if ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' {
			continue
		}
		first = ch
		break
	}
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if first == '{' || first == '[' || first == '<' || strings.Contains(ct, "text/html") {
		defer wd.stop()
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(br, int64(t.maxErrorBody())))
		return nil, t.classify(c, resp.StatusCode, resp.Header, b)
	}
	maxEvent := t.MaxEventSize
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventSize
	}
	return &Stream{resp: resp, br: br, ctx: ctx, wd: wd, provider: c.Provider, maxEvent: maxEvent}, nil
}

func nameOr(p string) string {
	if p == "" {
		return "provider"
	}
	return p
}

// FixUTF8 replaces each byte of s that is not valid UTF-8 with U+FFFD, as encoding/json does
// when it decodes a string, so a fast decoding path yields the same text as encoding/json. Valid
// input is returned as is, without allocating.
func FixUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
