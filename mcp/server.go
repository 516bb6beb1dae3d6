package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
)

// State is where a server is in its life.
type State string

const (
	StateStarting State = "starting"
	StateReady    State = "ready"
	StateFailed   State = "failed" // could not start or list; left down
	StateDown     State = "down"   // stopped after it was ready; restarted at the next turn
)

const (
	// maxRestarts is how many times a server that stopped is started again, one per turn,
	// before it is left down.
	maxRestarts = 3
	// maxListed bounds the tools read from one server, however many pages it offers.
	maxListed = 1000
	// A server's stderr reaches the log at most maxStderrLines lines and maxStderrBytes bytes
	// per start, each line cut at maxStderrLine bytes; the rest is read and dropped.
	maxStderrLine  = 1000
	maxStderrLines = 200
	maxStderrBytes = 64 << 10
)

// server is one running MCP server, shared by the sessions whose configuration names it the same
// way.
type server struct {
	cfg  Config
	log  *zap.Logger
	pool *Pool
	// auth signs the server in (an HTTP server without a static Authorization header, when the
	// pool has an OAuth flow); nil otherwise. authErr is why an entry's oauth cannot be used
	// (a secret variable that is not set); the server does not start then.
	auth    *mcpauth.Handler
	authErr error

	mu       sync.Mutex
	state    State
	err      error
	cs       *sdk.ClientSession
	stop     func() // kills the process group (stdio) or nothing (http)
	pid      int    // the stdio child's, for tests and `agentd mcp list`
	tools    []*sdk.Tool
	prompts  []*sdk.Prompt
	version  int  // bumped whenever tools change: a start, a re-list
	dirty    bool // the server said its tools changed; re-list before the next snapshot
	changes  int  // list_changed notifications since the last re-list (logged with it)
	restarts int
	ready    chan struct{} // closed when the current start attempt ends
	refs     int
	closed   bool
	res      resourceState // its resources (resources.go)
	live     liveCalls     // its calls running, for progress and elicitation (calls.go)
}

func newServer(p *Pool, cfg Config) *server {
	sv := &server{cfg: cfg, log: p.log.With(zap.String("mcpServer", cfg.Name)), pool: p, state: StateStarting, ready: make(chan struct{})}
	if cfg.Type == "http" && !cfg.SSE && p.OAuth != nil && !hasHeader(cfg.Headers, "Authorization") {
		c, err := cfg.oauthClient()
		sv.auth, sv.authErr = p.OAuth.HandlerWith(cfg.Name, cfg.URL, c), err
	}
	go sv.start()
	return sv
}

// start connects and lists the tools, bounded by the pool's start timeout.
func (sv *server) start() {
	ctx, cancel := context.WithTimeout(context.Background(), sv.pool.StartTimeout)
	defer cancel()
	began := time.Now()
	cs, stop, pid, err := sv.connect(ctx)
	var tl []*sdk.Tool
	var pl []*sdk.Prompt
	if err == nil {
		tl, pl, err = list(ctx, cs)
	}
	err = sizeError(err)
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("it did not answer within %s", sv.pool.StartTimeout)
	}
	sv.mu.Lock()
	closed := sv.closed
	if err != nil || closed {
		sv.state, sv.err = StateFailed, err
	} else {
		sv.state, sv.err, sv.cs, sv.stop, sv.tools, sv.prompts, sv.pid = StateReady, nil, cs, stop, tl, pl, pid
		sv.version++
	}
	close(sv.ready)
	sv.mu.Unlock()
	if err != nil || closed {
		if cs != nil {
			stop()
			go closeQuietly(cs)
		}
		if err != nil {
			sv.log.Warn("MCP server did not start", zap.Error(err))
		}
		return
	}
	sv.log.Info("MCP server started", zap.Int("tools", len(tl)), zap.Duration("took", time.Since(began)))
	go func() {
		// The connection ends when the process exits or the HTTP session is lost.
		werr := cs.Wait()
		sv.mu.Lock()
		if sv.cs == cs && !sv.closed {
			sv.state, sv.err, sv.cs = StateDown, fmt.Errorf("it stopped (%v)", orEOF(werr)), nil
			sv.log.Warn("MCP server stopped", zap.Error(werr))
		}
		sv.mu.Unlock()
		stop()
	}()
}

func orEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

func list(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, []*sdk.Prompt, error) {
	var caps *sdk.ServerCapabilities
	if ir := cs.InitializeResult(); ir != nil {
		caps = ir.Capabilities
	}
	var tl []*sdk.Tool
	if caps == nil || caps.Tools != nil {
		var err error
		if tl, err = listTools(ctx, cs, maxListed); err != nil {
			return nil, nil, fmt.Errorf("listing its tools failed: %w", sizeError(err))
		}
	}
	var pl []*sdk.Prompt
	if caps != nil && caps.Prompts != nil {
		// Prompts are a convenience: their failure costs nothing else (what was listed is kept).
		pl, _ = listPrompts(ctx, cs, maxListed)
	}
	return tl, pl, nil
}

func (sv *server) connect(ctx context.Context) (*sdk.ClientSession, func(), int, error) {
	if sv.cfg.Type == "http" {
		if sv.authErr != nil {
			return nil, nil, 0, sv.authErr
		}
		cs, err := sv.newClient().Connect(ctx, sv.httpTransport(), nil)
		if err != nil && sv.auth != nil {
			if ns := sv.auth.NeedsSignIn(); ns != nil {
				return nil, nil, 0, ns
			}
		}
		if err != nil {
			return nil, nil, 0, fmt.Errorf("connecting to %s failed: %w", sv.cfg.URL, sizeError(err))
		}
		return cs, func() {}, 0, nil
	}
	cmd := exec.Command(sv.cfg.Command, sv.cfg.Args...)
	cmd.Env = serverEnv(os.Environ(), sv.pool.hideEnv(), sv.cfg.Env)
	stderr, err := sv.stderrLog()
	if err != nil {
		return nil, nil, 0, fmt.Errorf("starting %q failed: %w", sv.cfg.Command, err)
	}
	// The child holds the pipe's write end; agentd's copy is closed once the child started (or
	// failed to), so the log reader ends when the child's process group is gone.
	cmd.Stderr = stderr
	defer stderr.Close()
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	cs, err := sv.newClient().Connect(ctx, &stdioTransport{cmd: cmd, drop: sv.dropped()}, nil)
	if err != nil {
		if cmd.Process != nil {
			killGroup(cmd)
			go func() { _ = cmd.Wait() }()
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, nil, 0, fmt.Errorf("its command %q was not found", sv.cfg.Command)
		}
		return nil, nil, 0, fmt.Errorf("starting %q failed: %w", sv.cfg.Command, sizeError(err))
	}
	// The session ends at the end of the child's output, read to its last byte (Wait closes the
	// pipe, so it comes after); reaping the child is then agentd's, as the transport is. stop
	// kills the group and waits, bounded, for the reaping: a stopped server is gone, not a zombie.
	reaped := make(chan struct{})
	go func() {
		_ = cs.Wait()
		_ = cmd.Wait()
		close(reaped)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			killGroup(cmd)
			select {
			case <-reaped:
			case <-time.After(2 * time.Second):
			}
		})
	}
	return cs, stop, cmd.Process.Pid, nil
}

// serverEnv is a stdio server's environment: agentd's own without the hidden variables, then the
// entry's env, which wins.
func serverEnv(inherited, hide []string, own []NameValue) []string {
	env := make([]string, 0, len(inherited)+len(own))
	for _, kv := range inherited {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(hide, name) {
			env = append(env, kv)
		}
	}
	for _, e := range own {
		env = append(env, e.Name+"="+e.Value)
	}
	return env
}

// stderrLog sends the child's stderr to agentd's log, a line at a time, capped: each line cut at
// maxStderrLine bytes (a longer one is read to its end and dropped past the cut), at most
// maxStderrLines lines and maxStderrBytes bytes in all, then one line saying the rest is not
// logged, and the rest read and dropped (a chatty or hostile server cannot fill the log). It
// returns the pipe's write end for the child.
func (sv *server) stderrLog() (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() {
		defer r.Close()
		br := bufio.NewReaderSize(r, 4096)
		lines, bytes := 0, 0
		for {
			line, err := readCapped(br, maxStderrLine)
			if len(line) > 0 || err == nil {
				text := Clean(string(line), maxStderrLine)
				if lines == maxStderrLines || bytes+len(text) > maxStderrBytes {
					sv.log.Info("MCP server stderr not logged past this point", zap.Int("lines", lines), zap.Int("bytes", bytes))
					break
				}
				lines, bytes = lines+1, bytes+len(text)
				sv.log.Info("MCP server stderr", zap.String("line", text))
			}
			if err != nil {
				return
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	return w, nil
}

// readCapped reads one line (without its newline), keeping at most max bytes of it; the rest of
// a longer line is read and dropped.
func readCapped(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := max - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return line, err
		}
		return bytesTrimNewline(line), nil
	}
}

func bytesTrimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// headerTransport adds an HTTP server's configured headers to the requests that go to the
// server's own origin and to no other: they usually carry a credential, which is bound to the
// origin it was given for (a redirect elsewhere goes without them).
type headerTransport struct {
	origin  string
	headers []NameValue
	base    http.RoundTripper
}

func newHeaderTransport(rawURL string, headers []NameValue, base http.RoundTripper) *headerTransport {
	u, err := url.Parse(rawURL)
	origin := "" // an unparsable URL was refused by Parse; if not, no request gets the headers
	if err == nil {
		origin = originOf(u)
	}
	return &headerTransport{origin: origin, headers: headers, base: base}
}

// originOf is scheme://host:port, the port spelled out, lower case.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme + "://" + net.JoinHostPort(u.Hostname(), port))
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if h.origin == "" || originOf(req.URL) != h.origin {
		if req.Header.Get("Authorization") != "" {
			// An OAuth token the SDK set, on a request a redirect sent elsewhere: the token is
			// bound to the server's origin.
			req = req.Clone(req.Context())
			req.Header.Del("Authorization")
		}
		return h.base.RoundTrip(req)
	}
	if len(h.headers) == 0 {
		return h.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for _, nv := range h.headers {
		req.Header.Set(nv.Name, nv.Value)
	}
	return h.base.RoundTrip(req)
}

func hasHeader(hs []NameValue, name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

// signIn runs the sign-in with the user through open, then starts the server again with the
// token.
func (sv *server) signIn(ctx context.Context, open mcpauth.Opener) error {
	if sv.auth == nil {
		return signInRefusal(sv.cfg)
	}
	if sv.authErr != nil {
		return fmt.Errorf("MCP server %s: %w", Clean(sv.cfg.Name, maxLabel), sv.authErr)
	}
	if err := sv.auth.SignIn(ctx, open, signInClient(sv.cfg)); err != nil {
		return err
	}
	sv.restart()
	return nil
}

// signInRefusal says why a server does not sign in.
func signInRefusal(cfg Config) error {
	if cfg.Type != "http" || cfg.SSE {
		return fmt.Errorf("MCP server %s is not a Streamable HTTP server; only those sign in", Clean(cfg.Name, maxLabel))
	}
	if hasHeader(cfg.Headers, "Authorization") {
		return fmt.Errorf("MCP server %s sends its own Authorization header; it does not sign in", Clean(cfg.Name, maxLabel))
	}
	return fmt.Errorf("MCP server %s: sign-in is not available here", Clean(cfg.Name, maxLabel))
}

// signInClient is the client of a sign-in's first request: the server's own headers, only to
// its origin.
func signInClient(cfg Config) *http.Client {
	return &http.Client{Transport: newHeaderTransport(cfg.URL, cfg.Headers, http.DefaultTransport), Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// SignIn signs the server of cfg in through flow without starting it (`agentd mcp login`).
func SignIn(ctx context.Context, flow *mcpauth.Flow, cfg Config, open Opener) error {
	if flow == nil || cfg.Type != "http" || cfg.SSE || hasHeader(cfg.Headers, "Authorization") {
		return signInRefusal(cfg)
	}
	c, err := cfg.oauthClient()
	if err != nil {
		return fmt.Errorf("MCP server %s: %w", Clean(cfg.Name, maxLabel), err)
	}
	return flow.HandlerWith(cfg.Name, cfg.URL, c).SignIn(ctx, open, signInClient(cfg))
}

// restart starts the server again now (after a sign-in), whatever its state; the next snapshot
// waits for the start.
func (sv *server) restart() {
	sv.mu.Lock()
	if sv.closed || sv.state == StateStarting {
		sv.mu.Unlock()
		return
	}
	cs, stop := sv.cs, sv.stop
	sv.cs, sv.stop = nil, nil
	sv.state, sv.err, sv.ready = StateStarting, nil, make(chan struct{})
	sv.mu.Unlock()
	if stop != nil {
		stop()
	}
	if cs != nil {
		go closeQuietly(cs)
	}
	go sv.start()
}

// maxDropLogs bounds the dropped lines of one start that are logged.
const maxDropLogs = 20

// dropped logs what the stdio filter dropped from the server's output, at most maxDropLogs lines
// a start.
func (sv *server) dropped() func(string, []byte) {
	n := 0
	return func(reason string, line []byte) {
		if n++; n <= maxDropLogs {
			sv.log.Warn("MCP server output dropped", zap.String("reason", reason), zap.String("line", Clean(string(line), 200)))
		}
	}
}

// markDirty notes a list_changed notification. However many arrive, the server is re-listed once,
// at the next snapshot, and the change logged once (when the server turns dirty): a server
// that floods its client with notifications costs neither re-listings nor log lines.
func (sv *server) markDirty() {
	sv.mu.Lock()
	was := sv.dirty
	sv.dirty = true
	sv.changes++
	sv.mu.Unlock()
	if !was {
		sv.log.Info("MCP server's list changed; the next turn re-lists it")
	}
}

// prepare readies the server for a snapshot: it restarts a server that stopped (at most
// maxRestarts times), re-lists the tools of one that said they changed, and waits, bounded by
// ctx, for a start in progress. It reports the tools to offer, or the reason there are none.
func (sv *server) prepare(ctx context.Context) (tl []*sdk.Tool, version int, err error) {
	sv.mu.Lock()
	if sv.state == StateDown && sv.restarts < maxRestarts && !sv.closed {
		sv.restarts++
		sv.state, sv.ready = StateStarting, make(chan struct{})
		go sv.start()
	}
	ready := sv.ready
	sv.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
		return nil, 0, fmt.Errorf("it is still starting")
	}
	sv.mu.Lock()
	cs, dirty := sv.cs, sv.dirty
	sv.mu.Unlock()
	if dirty && cs != nil {
		lctx, cancel := context.WithTimeout(ctx, sv.cfg.Timeout)
		tl, pl, lerr := list(lctx, cs)
		cancel()
		sv.mu.Lock()
		sv.dirty = false
		if sv.changes > 1 {
			sv.log.Info("MCP server re-listed once for its list_changed notifications", zap.Int("notifications", sv.changes))
		}
		sv.changes = 0
		if lerr == nil {
			sv.tools, sv.prompts = tl, pl
			sv.version++
		} else {
			sv.log.Warn("MCP server re-list failed; keeping its last tools", zap.Error(lerr))
		}
		sv.mu.Unlock()
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	switch sv.state {
	case StateReady:
		return sv.tools, sv.version, nil
	case StateDown:
		return nil, 0, fmt.Errorf("%v, and was restarted %d times, so it is left down", sv.err, sv.restarts)
	}
	return nil, 0, sv.err
}

// call runs one tool on the server.
func (sv *server) call(ctx context.Context, name string, args map[string]any) (*sdk.CallToolResult, error) {
	sv.mu.Lock()
	cs, err := sv.cs, sv.err
	sv.mu.Unlock()
	if cs == nil {
		if err == nil {
			err = errors.New("it is not running")
		}
		return nil, err
	}
	if args == nil {
		args = map[string]any{} // never null on the wire
	}
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	if c, _ := ctx.Value(callKey{}).(*liveCall); c != nil {
		params.SetProgressToken(c.token)
	}
	res, err := cs.CallTool(ctx, params)
	return res, sizeError(err)
}

// shutdown stops the server now: the process group is killed first, so the session's close does not
// wait for a child that ignores its closed stdin.
func (sv *server) shutdown() {
	sv.mu.Lock()
	sv.closed = true
	cs, stop := sv.cs, sv.stop
	sv.cs = nil
	sv.mu.Unlock()
	if stop != nil {
		stop()
	}
	if cs != nil {
		closeQuietly(cs)
	}
}
