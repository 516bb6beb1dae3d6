// Package httpsse is the one HTTP + Server-Sent-Events transport every provider dialect shares. It
// sends a request through a Doer (an *http.Client, or anything tests put in its place), waits a
// bounded time for the server to start answering (saying so in notices while it waits), checks the
// status, reads and classifies error bodies (bounded), retries transient failures that happen
// before the first byte of the stream with capped exponential backoff and jitter (honouring
// Retry-After, retry-after-ms and Google's RetryInfo, and announcing each retry as a notice), and
// hands the dialect an iterator over SSE events, parsed by its own reader (sse.go) without an
// allocation per event. It knows nothing of any provider's JSON: deciding that a stream ended
// without its end marker is the dialect's job (the reader reports EOF as success).
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
	// DefaultIdleTimeout ends a call whose answer has started and then received no byte for this
	// long (a stalled proxy or connection); providers ping or stream well within it, even while a
	// model thinks.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultFirstByteTimeout ends a call whose server has not started answering this long after
	// the request was sent. It is sized for a local model server loading its weights before the
	// first token; hosted APIs answer within seconds.
	DefaultFirstByteTimeout = 120 * time.Second
)

// While a call waits for the first byte, a notice says so after firstWaitNotice and then at every
// multiple of waitNoticeEvery (10 s, 30 s, 60 s, 90 s, …): often enough that a slow local model
// is visibly alive, rarely enough not to flood the chat.
const (
	firstWaitNotice = 10 * time.Second
	waitNoticeEvery = 30 * time.Second
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
	// MaxEventSize bounds one SSE event (some providers' events pass 64 KiB). 0 means
	// DefaultMaxEventSize.
	MaxEventSize int
	// MaxErrorBody bounds how much of an error body is read. 0 means DefaultMaxErrorBody.
	MaxErrorBody int
	// FirstByteTimeout is how long a call waits, once sent, for the server to start answering:
	// a status other than 2xx, or the first byte of a 2xx body (headers alone do not count; some
	// servers send them before the model has produced anything). Past it the call fails as a
	// network error, retried once. 0 means DefaultFirstByteTimeout; a negative value waits as long
	// as the context allows (the waiting notices still come).
	FirstByteTimeout time.Duration
	// IdleTimeout is how long a call whose answer has started may go without receiving a byte
	// before it fails as a network error (retried once when the stream has not started). 0 means
	// DefaultIdleTimeout; a negative value disables the watchdog.
	IdleTimeout time.Duration
	// ReadPace spaces the reads of a stream that arrives back to back (see DefaultReadPace). 0
	// means DefaultReadPace; a negative value reads at once, for a body already in memory.
	ReadPace time.Duration
	// After is the clock of the wait for the first byte (its waiting notices and its limit); nil
	// means time.After. Tests inject one that fires at once, to go through a long wait instantly.
	After func(d time.Duration) <-chan time.Time
}

// New returns a Transport with the default policy over a fresh *http.Client.
func New() *Transport { return &Transport{Doer: &http.Client{Transport: providers.HTTPTransport}} }

// Configured returns a copy of t with the settings of cfg that concern the transport applied (the
// first-byte limit, when cfg sets one); t itself is not changed. A nil t stays nil.
func Configured(t *Transport, cfg providers.Config) *Transport {
	if t == nil || cfg.FirstByteTimeout == 0 {
		return t
	}
	c := *t
	c.FirstByteTimeout = cfg.FirstByteTimeout
	return &c
}

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
	// Notice is called, on the goroutine that called Open or Fetch, before each retry with a line
	// such as "rate limited, retrying in 8 s" and while the server has not started answering
	// ("waiting for the model server to answer… 30 s"). If it returns false (the consumer left)
	// the call ends as cancelled.
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
	readPace time.Duration
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

// Bounds of the read that Release does after a completed answer: what may be left after a
// dialect's end marker is the chunked encoding's last chunk (5 bytes) and perhaps a final event.
const (
	maxDrain  = 64 << 10
	drainWait = 250 * time.Millisecond
)

// Release closes the stream as its dialect leaves it. When em completed (the dialect read the
// answer's end marker, so the server has sent all of it), it first reads the rest of the body,
// bounded in bytes and time: net/http keeps a connection for the next call only when its body
// was read to EOF, and a dialect stops at its marker, a read before that EOF. Without this every
// call after a completed one dialled a new connection. A stream left early (the consumer went,
// an error) is closed at once, which hangs up on a server still sending.
func (s *Stream) Release(em *providers.Emitter) {
	if em != nil && em.Completed() && s.ctx.Err() == nil {
		// Past the wait the call's context ends, which ends the read and drops the connection:
		// what Close did before.
		t := time.AfterFunc(drainWait, s.wd.cancel)
		io.CopyN(io.Discard, s.br, maxDrain)
		t.Stop()
	}
	s.Close()
}

// Events yields the stream's SSE events (see Event: each one's Data is valid until the next).
// Iteration stops at EOF without an error (the dialect decides whether its end marker was seen)
// or at the first read error, which Err then returns classified: cancelled when ctx ended, a
// protocol error for an oversized event, network otherwise.
func (s *Stream) Events() iter.Seq[Event] {
	return func(yield func(Event) bool) {
		p := newEventReader(s.br, s.maxEvent)
		p.pace, p.sleep, p.now = s.readPace, time.Sleep, time.Now
		for {
			ev, ok := p.next()
			if !ok {
				break
			}
			if !yield(ev) {
				return
			}
		}
		if p.err != nil && p.err != io.EOF {
			s.err = s.classifyReadErr(p.err)
			return
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
	if errors.Is(err, ErrEventTooLong) {
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
	err := t.retry(ctx, c, func(a *attempt) *providers.Error {
		var perr *providers.Error
		s, perr = t.openOnce(ctx, c, a)
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
	err := t.retry(ctx, c, func(a *attempt) *providers.Error {
		resp, br, wd, perr := t.send(ctx, c, false, a)
		if perr != nil {
			return perr
		}
		defer wd.stop()
		defer resp.Body.Close()
		b, rerr := io.ReadAll(io.LimitReader(br, DefaultMaxFetchBody))
		if rerr != nil {
			if wd.stalled.Load() {
				return a.silent(wd.err(c.Provider))
			}
			return providers.NetworkError(ctx, c.Provider, rerr)
		}
		body = b
		return nil
	})
	return body, err
}

// attempt is what one try tells the retry loop beyond its error.
type attempt struct {
	// silence: the server said nothing for the first-byte or the idle limit. Waiting that long
	// again is worth it once (a local server may have finished loading its model), not more.
	silence bool
}

// silent marks err as a failure by silence and returns it.
func (a *attempt) silent(err *providers.Error) *providers.Error {
	a.silence = true
	return err
}

func (t *Transport) retry(ctx context.Context, c *Call, once func(a *attempt) *providers.Error) *providers.Error {
	p := t.policy()
	silences := 0
	for n := 1; ; n++ {
		var a attempt
		err := once(&a)
		if err == nil {
			return nil
		}
		if err.Kind == providers.ErrCancelled || ctx.Err() != nil {
			return providers.Cancelled()
		}
		if !err.Retryable() || n >= p.MaxAttempts {
			return err
		}
		if a.silence {
			if silences++; silences > 1 {
				return err
			}
		}
		delay := t.backoff(p, n, err.RetryAfter)
		if delay < 0 {
			return err
		}
		text := noticeText(err, delay)
		if a.silence {
			text = "no answer from the model server, retrying in " + providers.HumanDuration(delay)
		}
		if c.Notice != nil && !c.Notice(text) {
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
	// A client holds no connections (the shared transport does): made here, it costs the
	// package's init nothing.
	return &http.Client{Transport: providers.HTTPTransport}
}

// send performs one exchange. It waits for the server to start answering (see awaitFirstByte)
// and returns a 2xx response with its body buffered in the returned reader and watched for
// stalls by the returned watchdog (which the caller stops), or the classified failure with the
// error body read (bounded) and the response closed.
func (t *Transport) send(ctx context.Context, c *Call, stream bool, a *attempt) (*http.Response, *bufio.Reader, *watchdog, *providers.Error) {
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
		return nil, nil, nil, &providers.Error{Kind: providers.ErrInvalidRequest, Detail: err.Error(),
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
	answered := make(chan answer, 1)
	go func() {
		resp, err := t.doer().Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		resp.Body = &idleBody{ReadCloser: resp.Body, wd: wd}
		br := bufio.NewReaderSize(resp.Body, 4096)
		if resp.StatusCode/100 == 2 {
			// The first byte of the body; a read error shows again on the next read.
			br.Peek(1)
		}
		answered <- answer{resp: resp, br: br}
	}()
	ans, perr := t.awaitFirstByte(ctx, c, answered, cancel)
	if perr != nil {
		wd.stop()
		if perr.Kind != providers.ErrCancelled {
			a.silent(perr)
		}
		return nil, nil, nil, perr
	}
	if ans.err != nil {
		wd.stop()
		if wd.stalled.Load() {
			return nil, nil, nil, a.silent(wd.err(c.Provider))
		}
		return nil, nil, nil, providers.NetworkError(ctx, c.Provider, ans.err)
	}
	resp := ans.resp
	// The server has answered: from here on the idle watchdog guards each read.
	wd.kick()
	if resp.StatusCode/100 == 2 {
		return resp, ans.br, wd, nil
	}
	defer wd.stop()
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(ans.br, int64(t.maxErrorBody())))
	return nil, nil, nil, t.classify(c, resp.StatusCode, resp.Header, b)
}

// answer is what the exchange had when the server started answering: the response (its body's
// first byte buffered in br when the status is 2xx), or the error that ended the exchange.
type answer struct {
	resp *http.Response
	br   *bufio.Reader
	err  error
}

// awaitFirstByte waits for the exchange running in the background to deliver its answer, saying
// so in a notice at each step of the waiting schedule, until the first-byte limit. Past the
// limit, when ctx ends or when the notice's consumer has left, it cancels the exchange (cancel
// ends its request's context), waits for it to let go, and returns the error. It runs on the
// caller's goroutine, so notices are given where the dialect may emit events.
func (t *Transport) awaitFirstByte(ctx context.Context, c *Call, answered <-chan answer, cancel context.CancelFunc) (answer, *providers.Error) {
	abandon := func(err *providers.Error) (answer, *providers.Error) {
		cancel()
		if ans := <-answered; ans.resp != nil {
			ans.resp.Body.Close()
		}
		return answer{}, err
	}
	limit := t.FirstByteTimeout
	if limit == 0 {
		limit = DefaultFirstByteTimeout
	}
	after := t.After
	if after == nil {
		after = time.After
	}
	var waited time.Duration
	for {
		next, notice := nextWait(waited, limit)
		select {
		case ans := <-answered:
			return ans, nil
		case <-ctx.Done():
			return abandon(providers.Cancelled())
		case <-after(next - waited):
		}
		waited = next
		if !notice {
			return abandon(firstByteError(c.Provider, limit))
		}
		if c.Notice != nil && !c.Notice("waiting for the model server to answer… "+waitedText(waited)) {
			return abandon(providers.Cancelled())
		}
	}
}

// nextWait is the next step of the wait for the first byte after waited: a notice, or the limit
// (a negative limit never comes).
func nextWait(waited, limit time.Duration) (at time.Duration, notice bool) {
	at = firstWaitNotice
	if waited >= firstWaitNotice {
		at = (waited/waitNoticeEvery + 1) * waitNoticeEvery
	}
	if limit > 0 && at >= limit {
		return limit, false
	}
	return at, true
}

// waitedText says how long a call has waited: "30 s", "2 min", "2 min 30 s".
func waitedText(d time.Duration) string {
	s := int(d / time.Second)
	switch {
	case s < 120:
		return fmt.Sprintf("%d s", s)
	case s%60 == 0:
		return fmt.Sprintf("%d min", s/60)
	default:
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
}

func firstByteError(who string, limit time.Duration) *providers.Error {
	d := providers.HumanDuration(limit)
	return &providers.Error{Kind: providers.ErrNetwork, Detail: "no answer within " + d,
		Message: fmt.Sprintf("%s did not start answering within %s, so the request was dropped; a local model may still be loading: try again, or raise the provider's firstByteTimeout setting.", c0(who), d)}
}

// watchdog cancels a call that has received nothing for its idle time. It is armed by the first
// kick, when the server starts answering: until then the first-byte limit applies.
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
		w.timer.Stop()
	}
	return w
}

// kick (re)starts the idle clock; it runs when the server answers and on every read that got
// bytes.
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
func (t *Transport) openOnce(ctx context.Context, c *Call, a *attempt) (*Stream, *providers.Error) {
	resp, br, wd, perr := t.send(ctx, c, true, a)
	if perr != nil {
		return nil, perr
	}
	first := byte(0)
	for i := 1; i <= 64; i++ {
		b, err := br.Peek(i)
		if len(b) < i {
			if err != nil && !errors.Is(err, io.EOF) {
				resp.Body.Close()
				wd.stop()
				if wd.stalled.Load() {
					return nil, a.silent(wd.err(c.Provider))
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
	pace := t.ReadPace
	switch {
	case pace == 0:
		pace = DefaultReadPace
	case pace < 0:
		pace = 0
	}
	return &Stream{resp: resp, br: br, ctx: ctx, wd: wd, provider: c.Provider, maxEvent: maxEvent, readPace: pace}, nil
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
