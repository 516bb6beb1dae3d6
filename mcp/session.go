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

// errTooLong is the read error of a message over maxMessage (a value, not an errors.New, so the
// package's init stays static: internal/inittest).
var errTooLong error = tooLong{}

type tooLong struct{}

func (tooLong) Error() string {
	return fmt.Sprintf("a message from the MCP server exceeded the size limit (%d MiB)", maxMessage>>20)
}

// newClient is the SDK client for one server. It declares no capabilities (no roots: agentd's
// tools, not a server's, are bound to the project; no sampling, no elicitation), so a server's
// request for them is refused by the SDK. The SDK negotiates the era itself: server/discover
// (the 2026-07-28 revision) first, then the 2025 initialize when the server does not know it.
func (sv *server) newClient() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "agentd", Version: "1"}, &sdk.ClientOptions{
		Capabilities:             &sdk.ClientCapabilities{},
		ToolListChangedHandler:   func(context.Context, *sdk.ToolListChangedRequest) { sv.markDirty() },
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) { sv.markDirty() },
	})
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

// limitBodies bounds what the server sends over HTTP: a JSON answer at most maxMessage bytes
// (the SDK reads it whole with no limit), and an event stream per event, which the SDK bounds
// itself (MaxEventSize).
type limitBodies struct{ base http.RoundTripper }

func (l limitBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil || resp.Body == nil || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	resp.Body = &bodyLimit{rc: resp.Body, left: maxMessage}
	return resp, nil
}

type bodyLimit struct {
	rc   io.ReadCloser
	left int
}

func (b *bodyLimit) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLong
	}
	if len(p) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if n > b.left {
		return 0, errTooLong
	}
	b.left -= n
	return n, err
}

func (b *bodyLimit) Close() error { return b.rc.Close() }

// httpTransport is the HTTP server's transport: Streamable HTTP, or, for a server configured
// with "transport": "sse", the old HTTP+SSE transport (2024-11-05). Requests carry the
// configured headers only to the server's own origin (headerTransport).
func (sv *server) httpTransport() sdk.Transport {
	hc := &http.Client{Transport: limitBodies{newHeaderTransport(sv.cfg.URL, sv.cfg.Headers, http.DefaultTransport)}}
	if sv.cfg.SSE {
		return detached{&sdk.SSEClientTransport{Endpoint: sv.cfg.URL, HTTPClient: hc, MaxEventSize: maxMessage}}
	}
	return &sdk.StreamableClientTransport{Endpoint: sv.cfg.URL, HTTPClient: hc, MaxRetries: 1, MaxEventSize: maxMessage}
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
