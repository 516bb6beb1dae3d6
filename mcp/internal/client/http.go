package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/providers/httpsse"
)

// HTTP speaks Streamable HTTP to the server at Endpoint through Client (whose transport decides
// which headers a request carries: package mcp's binds the configured ones to their origin).
// MaxRetries is how many times the standing GET stream is opened again, after it ended without
// bringing a message, before the session is given up (the SDK's rule; 0 means 5, negative none).
type HTTP struct {
	Endpoint   string
	Client     *http.Client
	MaxRetries int
}

// ErrSessionMissing is the failure of a session the server no longer knows (404 with a
// session id).
var ErrSessionMissing = errors.New("the server no longer knows the MCP session")

// reconnectDelay is the first wait before the standing stream is opened again (tests shorten
// it); each later one is 1.5 times longer, each with as much jitter again at most.
var reconnectDelay = time.Second

func (t *HTTP) connect(_ context.Context, s *Session) (conn, error) {
	hc := t.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	retries := t.MaxRetries
	if retries == 0 {
		retries = 5
	} else if retries < 0 {
		retries = 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &httpConn{s: s, url: t.Endpoint, hc: hc, retries: retries, ctx: ctx, cancel: cancel}
	s.conn = c
	return c, nil
}

type httpConn struct {
	s       *Session
	url     string
	hc      *http.Client
	retries int
	ctx     context.Context // the connection's: ends the standing stream at close
	cancel  context.CancelFunc

	mu        sync.Mutex
	sessionID string
	version   string
	missing   bool

	closeOnce sync.Once
	closeErr  error
}

// headers adds the session's headers: its id and, after the handshake, the protocol version.
func (c *httpConn) headers(req *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	if c.sessionID != "" {
		req.Header.Set("Mcp-Session-Id", c.sessionID)
	}
}

// fail ends the session because the connection broke.
func (c *httpConn) fail(err error) {
	if errors.Is(err, ErrSessionMissing) {
		c.mu.Lock()
		c.missing = true
		c.mu.Unlock()
	}
	c.s.end(err)
	go c.close()
}

func transient(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return true
	}
	return false
}

// check turns a failed status into an error: a JSON-RPC error in the body or a transient status
// fails the one request; a lost session or any other status breaks the connection.
func (c *httpConn) check(what string, resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	defer resp.Body.Close()
	if transient(resp.StatusCode) {
		return fmt.Errorf("%s: %s", what, http.StatusText(resp.StatusCode))
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var in incoming
	if jsonErr := json.Unmarshal(body, &in); jsonErr == nil && len(in.Error) > 0 {
		return fmt.Errorf("%s: %w (HTTP %d)", what, rpcError(in.Error), resp.StatusCode)
	}
	c.mu.Lock()
	sid := c.sessionID
	c.mu.Unlock()
	var err error
	if resp.StatusCode == http.StatusNotFound && sid != "" {
		err = fmt.Errorf("%s: %w (session %s)", what, ErrSessionMissing, sid)
	} else {
		err = fmt.Errorf("%s: HTTP %d %s", what, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	c.fail(err)
	return err
}

// send POSTs one message. The request ends with ctx (the caller's) or with the connection, so
// a closed session leaves no request or stream behind.
func (c *httpConn) send(ctx context.Context, msg []byte, id int64) error {
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	streaming := false
	defer func() {
		if !streaming {
			stop()
			cancel()
		}
	}()
	what := "sending a message"
	if id > 0 {
		what = "sending a request"
	}
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.url, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c.headers(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := c.check(what, resp); err != nil {
		return err
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.mu.Lock()
		had := c.sessionID
		if had == "" {
			c.sessionID = sid
		}
		c.mu.Unlock()
		if had != "" && had != sid {
			resp.Body.Close()
			return fmt.Errorf("%s: the server changed the session id", what)
		}
	}
	if id == 0 {
		// A notification or an answer: 202 Accepted, no body (some servers send 200 and an
		// empty body, which the SDK also accepts).
		resp.Body.Close()
		return nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.s.opts.MaxMessage)+1))
		if err != nil {
			return fmt.Errorf("%s: reading the answer: %w", what, err)
		}
		if len(body) > c.s.opts.MaxMessage {
			c.s.deliverError(id, fmt.Sprintf("%v (%d MiB)", ErrTooLong, c.s.opts.MaxMessage>>20))
			return nil
		}
		c.s.receive(body)
		c.s.deliverError(id, "the server's JSON answer was not the answer to this request")
		return nil
	case "text/event-stream":
		streaming = true
		go func() {
			defer cancel()
			defer stop()
			c.stream(ctx, resp, id)
		}()
		return nil
	}
	resp.Body.Close()
	return fmt.Errorf("%s: the server answered with the content type %q", what, ct)
}

// stream reads a POST's SSE answer until the answer to id arrives; the stream ending first
// fails the call. ctx is the call's: giving the call up ends the stream.
func (c *httpConn) stream(ctx context.Context, resp *http.Response, id int64) {
	defer resp.Body.Close()
	err := c.events(resp.Body, func() bool { return !c.s.waiting(id) })
	if ctx.Err() != nil || !c.s.waiting(id) {
		return
	}
	msg := "the server's event stream ended without the answer"
	if err != nil {
		msg = fmt.Sprintf("the server's event stream failed before the answer: %v", err)
	}
	c.s.deliverError(id, msg)
}

// events hands each message event of body to the session until stop says so or the body ends.
func (c *httpConn) events(body io.Reader, stop func() bool) error {
	for ev, err := range httpsse.ReadEvents(body, c.s.opts.MaxMessage) {
		if err != nil {
			return err
		}
		if len(ev.Data) == 0 || ev.Type != "" && ev.Type != "message" {
			continue
		}
		c.s.receive(ev.Data)
		if stop() {
			return nil
		}
	}
	return nil
}

// initialized puts the negotiated version on every request from now on.
func (c *httpConn) initialized(version string) {
	c.mu.Lock()
	c.version = version
	c.mu.Unlock()
}

// ready opens the standing GET stream, on which the server sends what is not an answer
// (list_changed among it). (The SDK opens it before the initialized notification, and a
// stream that fails at once fails its Connect; here Connect succeeds and the session ends.)
func (c *httpConn) ready() { go c.listen() }

// listen keeps the standing stream open, as the SDK's client does: a server that does not offer
// one (405, another 4xx, or not an event stream, at the first GET) is fine; a stream that ends,
// or a GET that fails to connect, is tried again, and after MaxRetries of those in a row that
// brought no message the session is given up, as it is at once on a failed status (a 5xx, or a
// 4xx on a reconnection: the session is gone).
func (c *httpConn) listen() {
	idle := 0
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			d := time.Duration(float64(reconnectDelay) * pow15(max(idle-1, 0)))
			d += rand.N(d + 1)
			select {
			case <-time.After(d):
			case <-c.ctx.Done():
				return
			}
		}
		req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.url, nil)
		if err != nil {
			c.fail(err)
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		c.headers(req)
		resp, err := c.hc.Do(req)
		got := false
		if err == nil {
			ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			if attempt == 0 && (resp.StatusCode == http.StatusMethodNotAllowed || ct != "text/event-stream" || resp.StatusCode >= 400 && resp.StatusCode < 500) {
				resp.Body.Close()
				return
			}
			if cerr := c.check("the standing event stream", resp); cerr != nil {
				c.fail(cerr) // check already failed the session unless the status was transient
				return
			}
			err = c.events(resp.Body, func() bool { got = true; return false })
			resp.Body.Close()
		}
		if c.ctx.Err() != nil {
			return
		}
		if got {
			idle = 0
		} else if idle++; idle > c.retries {
			c.fail(fmt.Errorf("the standing event stream ended or failed %d times in a row without a message (last: %v)", idle, orEnd(err)))
			return
		}
	}
}

func orEnd(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

func pow15(n int) float64 {
	f := 1.0
	for range n {
		f *= 1.5
	}
	return min(f, 30)
}

// close deletes the session on the server (bounded, best effort) unless it is gone, then ends
// every stream of the connection.
func (c *httpConn) close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		sid, missing := c.sessionID, c.missing
		c.mu.Unlock()
		if sid != "" && !missing {
			ctx, stop := context.WithTimeout(c.ctx, 5*time.Second)
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
			if err == nil {
				c.headers(req)
				var resp *http.Response
				if resp, err = c.hc.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			stop()
			c.closeErr = err
		}
		c.cancel()
	})
	return c.closeErr
}
