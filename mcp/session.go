package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxMessage bounds one message from a server (a stdio line, a JSON body, an SSE event): the
// SDK's own bound for an SSE event (sdk.DefaultMaxEventSize), applied by agentd to the rest.
const maxMessage = sdk.DefaultMaxEventSize

// maxPages bounds the pages of one listing: a server that hands out cursors forever is listed
// no further.
const maxPages = 100

// discoverTimeout bounds a stdio server's answer to the 2026-07-28 revision's server/discover
// (see newClient); a variable for the tests. It is generous, as the request waits in the pipe
// while the server starts (npx's first download included); a server that answers late falls
// back to initialize, which a dual-era server answers.
var discoverTimeout = 10 * time.Second

// errTooLong is the read error of a message over maxMessage (a value, not an errors.New, so the
// package's init stays static: internal/test/inittest).
var errTooLong error = tooLong{}

type tooLong struct{}

func (tooLong) Error() string {
	return fmt.Sprintf("a message from the MCP server exceeded the size limit (%d MiB)", maxMessage>>20)
}

// newClient is the SDK client for one server. It declares elicitation (form and URL: a server's
// questions during a call go to the user, calls.go) and nothing else: no roots (agentd's tools,
// not a server's, are bound to the project) and no sampling, both deprecated by the 2026-07-28
// revision (SEP-2577): a server's sampling request is refused by the SDK, and its roots/list is
// answered with no roots (the SDK's client answers it whatever it declares; agentd adds none). The SDK negotiates the era itself: server/discover
// (the 2026-07-28 revision) first, then the 2025 initialize when the server does not know it.
//
// Over stdio, server/discover is bounded by discoverTimeout: the SDK falls back to initialize on
// its error, but waits for its answer as long as the connect's context lasts, and a 2025 stdio
// server that ignores a request it does not know (rather than answering method-not-found) would
// cost the whole start. (Over HTTP every POST is answered, so no bound is needed there.)
func (sv *server) newClient() *sdk.Client {
	c := sdk.NewClient(&sdk.Implementation{Name: "agentd", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{
			Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}},
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { sv.markDirty() },
		PromptListChangedHandler:    func(context.Context, *sdk.PromptListChangedRequest) { sv.markDirty() },
		ResourceListChangedHandler:  func(context.Context, *sdk.ResourceListChangedRequest) { sv.res.changed() },
		ProgressNotificationHandler: sv.onProgress,
		ElicitationHandler:          sv.onElicit,
	})
	if sv.cfg.Type != "http" {
		c.AddSendingMiddleware(boundDiscover)
	}
	return c
}

func boundDiscover(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "server/discover" {
			return next(ctx, method, req)
		}
		dctx, cancel := context.WithTimeout(ctx, discoverTimeout)
		defer cancel()
		res, err := next(dctx, method, req)
		if err != nil && dctx.Err() != nil && ctx.Err() == nil {
			// The SDK falls back to initialize on any error but a modern one.
			err = fmt.Errorf("server/discover was not answered within %s", discoverTimeout)
		}
		return res, err
	}
}

// stdioTransport runs cmd as a stdio server. Unlike the SDK's CommandTransport, closing the
// connection only closes the child's stdin: the child's process group is killed by the server's
// stop, at once (CommandTransport waits 5 s for the child before its SIGTERM, and signals only
// the child, not what it started).
type stdioTransport struct {
	cmd  *exec.Cmd
	drop func(reason string, line []byte) // a line the filter dropped (lineFilter)
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	r := &lineFilter{br: bufio.NewReaderSize(stdout, 64<<10), drop: t.drop}
	return (&sdk.IOTransport{Reader: io.NopCloser(r), Writer: stdin, MaxLineLength: maxMessage}).Connect(ctx)
}

// lineFilter hands the SDK only the lines that are JSON-RPC messages. The SDK's reader ends the
// whole session at the first line that is not JSON (a server's stray log line on stdout), at a
// message that is neither a request nor an answer, and at an error of the wrong shape; agentd's
// former client dropped the first two and failed only the call of the third. So: a line that is
// not a JSON object (or a batch of them) with a method or an id is dropped and reported to drop;
// an answer whose error is not {code, message} becomes a well-formed error for its call; a line
// over maxMessage bytes fails the read (the session ends, saying so).
type lineFilter struct {
	br   *bufio.Reader
	drop func(reason string, line []byte)
	buf  []byte // what is left of the current line to hand on
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		line, err := readLine(f.br, maxMessage)
		if err != nil {
			return 0, err
		}
		if keep, reason := filterMessage(line); keep != nil {
			f.buf = append(keep, '\n')
		} else if reason != "" && f.drop != nil {
			f.drop(reason, line)
		}
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// readLine reads one line without its end, failing with errTooLong past max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			return nil, errTooLong
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && len(line) == 0 {
			return nil, err
		}
		return bytes.TrimSpace(line), nil
	}
}

type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method json.RawMessage `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// filterMessage says what of line to hand the SDK (nil: nothing) and, for a drop, why ("" for an
// empty line).
func filterMessage(line []byte) ([]byte, string) {
	if len(line) == 0 {
		return nil, ""
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return nil, "not a JSON-RPC message"
		}
		for _, m := range batch {
			if fixed, why := filterMessage(bytes.TrimSpace(m)); fixed == nil || !bytes.Equal(fixed, bytes.TrimSpace(m)) {
				return nil, "a batch holding " + why
			}
		}
		return line, ""
	}
	var m wireMessage
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		return nil, "not a JSON-RPC message"
	}
	var method string
	if len(m.Method) > 0 && json.Unmarshal(m.Method, &method) == nil && method != "" {
		return line, ""
	}
	if len(m.ID) == 0 || string(m.ID) == "null" {
		return nil, "neither a request nor an answer"
	}
	if len(m.Error) > 0 && string(m.Error) != "null" {
		var e struct {
			Code    *int64  `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(m.Error, &e) != nil || e.Code == nil || e.Message == nil {
			msg, _ := json.Marshal(fmt.Sprintf("the server sent a malformed error: %s", Clean(string(m.Error), 200)))
			return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`, m.ID, msg), ""
		}
		return line, ""
	}
	if len(m.Result) == 0 {
		return nil, "neither a request nor an answer"
	}
	return line, ""
}

// limitBodies bounds and checks what the server answers a POST over HTTP. The SDK ends the
// whole session when one answer is wrong (a JSON body that is not a message, another content
// type, an SSE event over its limit), where agentd's former client failed only that call; and it
// reads a JSON answer whole with no limit. So an answer to a request (a POST with an id) is
// checked here, and a wrong one replaced by a JSON-RPC error for that request, which fails the
// call and keeps the session: a JSON body at most maxMessage bytes and a JSON-RPC message (an
// error of the wrong shape mended as on stdio), an event stream's events at most maxMessage
// bytes each.
type limitBodies struct{ base http.RoundTripper }

func (l limitBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	id := requestID(req)
	resp, err := l.base.RoundTrip(req)
	if err != nil || resp.Body == nil || id == nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseLimit{rc: resp.Body, br: bufio.NewReaderSize(resp.Body, 64<<10), id: id}
		return resp, nil
	case strings.HasPrefix(ct, "application/json"):
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxMessage+1))
		resp.Body.Close()
		switch {
		case rerr != nil:
			return rpcError(resp, id, "reading the server's answer failed: "+rerr.Error()), nil
		case len(body) > maxMessage:
			return rpcError(resp, id, errTooLong.Error()), nil
		}
		fixed, why := filterMessage(bytes.TrimSpace(body))
		if fixed == nil {
			return rpcError(resp, id, fmt.Sprintf("the server's answer was %s: %s", why, Clean(string(body), 200))), nil
		}
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(fixed)), int64(len(fixed))
		resp.Header.Del("Content-Length")
		return resp, nil
	}
	resp.Body.Close()
	return rpcError(resp, id, fmt.Sprintf("the server answered with content type %q, not JSON or an event stream", Clean(ct, 100))), nil
}

// requestID is the id of the JSON-RPC request a POST carries, or nil (a notification, a batch, a
// GET or DELETE).
func requestID(req *http.Request) json.RawMessage {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return nil
	}
	rc, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer rc.Close()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.NewDecoder(rc).Decode(&m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil
	}
	return m.ID
}

// rpcError replaces resp with a JSON answer failing request id with message.
func rpcError(resp *http.Response, id json.RawMessage, message string) *http.Response {
	body := errorMessage(id, message)
	h := resp.Header.Clone()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: resp.Request}
}

func errorMessage(id json.RawMessage, message string) []byte {
	msg, _ := json.Marshal(message)
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`, id, msg)
}

// sseLimit hands on an event stream an event at a time; an event over maxMessage bytes ends the
// stream with an error event for the request instead.
type sseLimit struct {
	rc   io.ReadCloser
	br   *bufio.Reader
	id   json.RawMessage
	buf  []byte
	done bool
}

func (s *sseLimit) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.done {
			return 0, io.EOF
		}
		var ev []byte
		for {
			line, err := readLine(s.br, maxMessage)
			if err == errTooLong || len(ev)+len(line) > maxMessage {
				s.buf, s.done = append([]byte("\n\ndata: "), append(errorMessage(s.id, errTooLong.Error()), "\n\n"...)...), true
				s.rc.Close()
				break
			}
			if err != nil {
				if len(ev) > 0 {
					s.buf = append(ev, '\n')
				}
				s.done = true
				break
			}
			ev = append(append(ev, line...), '\n')
			if len(line) == 0 {
				s.buf = ev
				break
			}
		}
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

func (s *sseLimit) Close() error { return s.rc.Close() }

// httpTransport is the HTTP server's transport: Streamable HTTP, or, for a server configured
// with "transport": "sse", the old HTTP+SSE transport (2024-11-05). Requests carry the
// configured headers only to the server's own origin (headerTransport).
func (sv *server) httpTransport() sdk.Transport {
	hc := &http.Client{Transport: limitBodies{newHeaderTransport(sv.cfg.URL, sv.cfg.Headers, http.DefaultTransport)}}
	if sv.cfg.SSE {
		return detached{&sdk.SSEClientTransport{Endpoint: sv.cfg.URL, HTTPClient: hc, MaxEventSize: maxMessage}}
	}
	t := &sdk.StreamableClientTransport{Endpoint: sv.cfg.URL, HTTPClient: hc, MaxRetries: 1, MaxEventSize: 2 * maxMessage}
	if sv.auth != nil {
		t.OAuthHandler = sv.auth
	}
	return t
}

// detached connects through t bounded by the connect's context, but keeps the connection past
// it: the SDK's SSEClientTransport opens its event stream with the context Connect is given, so
// the end of the start's time-out (or of any bounded context) would end the session with it.
type detached struct{ t sdk.Transport }

func (d detached) Connect(ctx context.Context) (sdk.Connection, error) {
	live, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel) // a connect that outlives ctx is given up
	conn, err := d.t.Connect(live)
	if !stop() || err != nil {
		cancel()
		if err == nil {
			_ = conn.Close()
			err = ctx.Err()
		}
		return nil, err
	}
	return conn, nil
}

// listTools lists the server's tools, page by page, at most max of them (and maxPages pages).
func listTools(ctx context.Context, cs *sdk.ClientSession, max int) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	cursor := ""
	for range maxPages {
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return out, err
		}
		for _, t := range res.Tools {
			if len(out) == max {
				return out, nil
			}
			if t != nil {
				out = append(out, t)
			}
		}
		if res.NextCursor == "" || len(out) == max {
			break
		}
		cursor = res.NextCursor
	}
	return out, nil
}

// listPrompts lists the server's prompts as listTools lists its tools.
func listPrompts(ctx context.Context, cs *sdk.ClientSession, max int) ([]*sdk.Prompt, error) {
	var out []*sdk.Prompt
	cursor := ""
	for range maxPages {
		res, err := cs.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return out, err
		}
		for _, p := range res.Prompts {
			if len(out) == max {
				return out, nil
			}
			if p != nil {
				out = append(out, p)
			}
		}
		if res.NextCursor == "" || len(out) == max {
			break
		}
		cursor = res.NextCursor
	}
	return out, nil
}

// sizeError says so when err is a message over the size limit, however the SDK wrapped it (its
// own SSE bound included).
func sizeError(err error) error {
	if err == nil || errors.Is(err, errTooLong) {
		return err
	}
	if s := err.Error(); strings.Contains(s, "exceeded") && (strings.Contains(s, "maximum") || strings.Contains(s, "size")) || strings.Contains(s, "too large") {
		return fmt.Errorf("%w: %v", errTooLong, err)
	}
	return err
}

// closeQuietly closes a session in the background, bounded: the SDK's Close waits for its reader,
// which a hung server may hold.
func closeQuietly(cs *sdk.ClientSession) {
	done := make(chan struct{})
	go func() { _ = cs.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
}
