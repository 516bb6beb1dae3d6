package mcp

import (
	"context"
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
type stdioTransport struct{ cmd *exec.Cmd }

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
	return (&sdk.IOTransport{Reader: io.NopCloser(stdout), Writer: stdin, MaxLineLength: maxMessage}).Connect(ctx)
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
