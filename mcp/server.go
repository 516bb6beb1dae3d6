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

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/mcp/internal/client"
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
)

// server is one running MCP server, shared by the sessions whose configuration names it the same
// way.
type server struct {
	cfg  Config
	log  *zap.Logger
	pool *Pool

	mu       sync.Mutex
	state    State
	err      error
	cs       *client.Session
	stop     func() // kills the process group (stdio) or nothing (http)
	pid      int    // the stdio child's, for tests and `agentd mcp list`
	tools    []client.Tool
	prompts  []client.Prompt
	version  int  // bumped whenever tools change: a start, a re-list
	dirty    bool // the server said its tools changed; re-list before the next snapshot
	restarts int
	ready    chan struct{} // closed when the current start attempt ends
	refs     int
	closed   bool
}

func newServer(p *Pool, cfg Config) *server {
	sv := &server{cfg: cfg, log: p.log.With(zap.String("mcpServer", cfg.Name)), pool: p, state: StateStarting, ready: make(chan struct{})}
	go sv.start()
	return sv
}

// start connects and lists the tools, bounded by the pool's start timeout.
func (sv *server) start() {
	ctx, cancel := context.WithTimeout(context.Background(), sv.pool.StartTimeout)
	defer cancel()
	began := time.Now()
	cs, stop, pid, err := sv.connect(ctx)
	var tl []client.Tool
	var pl []client.Prompt
	if err == nil {
		tl, pl, err = list(ctx, cs)
	}
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
			go cs.Close()
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

func list(ctx context.Context, cs *client.Session) ([]client.Tool, []client.Prompt, error) {
	caps := cs.InitializeResult().Capabilities
	var tl []client.Tool
	if caps == nil || caps.Tools != nil {
		var err error
		if tl, err = cs.Tools(ctx, maxListed); err != nil {
			return nil, nil, fmt.Errorf("listing its tools failed: %w", err)
		}
	}
	var pl []client.Prompt
	if caps != nil && caps.Prompts != nil {
		// Prompts are a convenience: their failure costs nothing else (what was listed is kept).
		pl, _ = cs.Prompts(ctx, maxListed)
	}
	return tl, pl, nil
}

// options are the client's: no roots (agentd's tools, not a server's, are bound to the
// project), list changes mark the server dirty, and what the server sends wrong is logged.
func (sv *server) options() client.Options {
	return client.Options{
		Info:           client.Info{Name: "agentd", Version: "1"},
		ToolsChanged:   sv.markDirty,
		PromptsChanged: sv.markDirty,
		Log:            func(msg string, err error) { sv.log.Warn(msg, zap.Error(err)) },
	}
}

func (sv *server) connect(ctx context.Context) (*client.Session, func(), int, error) {
	if sv.cfg.Type == "http" {
		hc := &http.Client{Transport: newHeaderTransport(sv.cfg.URL, sv.cfg.Headers, http.DefaultTransport)}
		cs, err := client.Connect(ctx, &client.HTTP{Endpoint: sv.cfg.URL, Client: hc, MaxRetries: 1}, sv.options())
		if err != nil {
			return nil, nil, 0, fmt.Errorf("connecting to %s failed: %w", sv.cfg.URL, err)
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
	var once sync.Once
	stop := func() { once.Do(func() { killGroup(cmd) }) }
	// The session's Close waits TerminateDuration for the child after closing its stdin; agentd
	// kills the group itself first, so the wait is only a backstop.
	cs, err := client.Connect(ctx, &client.Stdio{Cmd: cmd, TerminateDuration: 100 * time.Millisecond}, sv.options())
	if err != nil {
		stop()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, nil, 0, fmt.Errorf("its command %q was not found", sv.cfg.Command)
		}
		return nil, nil, 0, fmt.Errorf("starting %q failed: %w", sv.cfg.Command, err)
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

// maxStderrLines caps the lines of one server process's stderr that reach agentd's log: a
// server printing in a loop would otherwise fill the disk the log is on.
const maxStderrLines = 200

// stderrLog sends the child's stderr to agentd's log, a line at a time (long lines cut), up to
// maxStderrLines and then one line saying the rest is not logged; the rest is still read, so the
// child never blocks on a full pipe. It returns the pipe's write end for the child.
func (sv *server) stderrLog() (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 4096), 64<<10)
		n := 0
		for sc.Scan() {
			if n++; n > maxStderrLines {
				sv.log.Info("MCP server stderr: the server wrote more; the rest is not logged", zap.Int("max", maxStderrLines))
				break
			}
			sv.log.Info("MCP server stderr", zap.String("line", Clean(sc.Text(), 1000)))
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	return w, nil
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
	if len(h.headers) == 0 || h.origin == "" || originOf(req.URL) != h.origin {
		return h.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for _, nv := range h.headers {
		req.Header.Set(nv.Name, nv.Value)
	}
	return h.base.RoundTrip(req)
}

func (sv *server) markDirty() {
	sv.mu.Lock()
	was := sv.dirty
	sv.dirty = true
	sv.mu.Unlock()
	// One line until the next re-list: a server sending list_changed in a loop must not flood
	// the log.
	if !was {
		sv.log.Info("MCP server's list changed; the next turn re-lists it")
	}
}

// prepare readies the server for a snapshot: it restarts a server that stopped (at most
// maxRestarts times), re-lists the tools of one that said they changed, and waits, bounded by
// ctx, for a start in progress. It reports the tools to offer, or the reason there are none.
func (sv *server) prepare(ctx context.Context) (tl []client.Tool, version int, err error) {
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
func (sv *server) call(ctx context.Context, name string, args map[string]any) (*client.CallToolResult, error) {
	sv.mu.Lock()
	cs, err := sv.cs, sv.err
	sv.mu.Unlock()
	if cs == nil {
		if err == nil {
			err = errors.New("it is not running")
		}
		return nil, err
	}
	return cs.CallTool(ctx, name, args)
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
		_ = cs.Close()
	}
}
