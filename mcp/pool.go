package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/tools"
)

// DefaultStartTimeout bounds a server's start (connect, initialize, list).
const DefaultStartTimeout = 30 * time.Second

// Pool holds the daemon's running servers: one per distinct configuration, shared by the
// sessions that name it and stopped when the last of them closes.
type Pool struct {
	log *zap.Logger
	// StartTimeout bounds a server's start; set before the first Open.
	StartTimeout time.Duration
	// HideEnv, when set, names the variables a stdio server does not inherit from agentd's
	// environment: those that may hold a provider key, which is bound to its provider's origin
	// (an MCP server is another party). An entry's own env may still set one. Set before the
	// first Open.
	HideEnv func() []string
	// OAuth signs HTTP servers in (MCP authorization); nil leaves a 401 a failure. Set before
	// the first Open.
	OAuth *mcpauth.Flow

	mu      sync.Mutex
	servers map[string]*server
	closed  bool
}

// NewPool returns an empty pool.
func NewPool(log *zap.Logger) *Pool {
	if log == nil {
		log = zap.NewNop()
	}
	return &Pool{log: log, StartTimeout: DefaultStartTimeout, servers: map[string]*server{}}
}

func (p *Pool) hideEnv() []string {
	if p == nil || p.HideEnv == nil {
		return nil
	}
	return p.HideEnv()
}

func (p *Pool) acquire(cfg Config) *server {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := cfg.Key()
	sv := p.servers[key]
	if sv == nil {
		sv = newServer(p, cfg)
		if !p.closed {
			p.servers[key] = sv
		} else {
			go sv.shutdown()
		}
	}
	sv.refs++
	return sv
}

func (p *Pool) release(sv *server) {
	p.mu.Lock()
	sv.refs--
	last := sv.refs == 0
	if last && p.servers[sv.cfg.Key()] == sv {
		delete(p.servers, sv.cfg.Key())
	}
	p.mu.Unlock()
	if last {
		sv.shutdown()
	}
}

// Close stops every server (agentd is exiting).
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	all := p.servers
	p.servers = map[string]*server{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, sv := range all {
		wg.Go(sv.shutdown)
	}
	wg.Wait()
}

// Notify reports a notice to the session's client.
type Notify func(severity, title, description string)

// Opener shows the user an authorization URL (mcpauth.Opener).
type Opener = mcpauth.Opener

// SignInNeeded reports that a server of the set needs the user to sign in (its start found no
// token): the client offers a "Sign in" action, which calls Set.SignIn.
type SignInNeeded func(server string, err error)

// Set is one session's servers, in the order they were named.
type Set struct {
	pool    *Pool
	builtin *tools.Registry
	notify  Notify
	signIn  SignInNeeded
	servers []*server

	mu       sync.Mutex
	snap     *tools.Registry
	versions []int
	closed   bool
	// found are the tools find_tools added to the session beyond the budget; foundGen counts
	// its additions, so a snapshot is rebuilt after one.
	found    map[key]bool
	foundGen int
	snapGen  int
	// reported holds, per server, the failure last reported, so one failure is one notice.
	reported map[*server]string
	done     chan struct{} // closed by Close
}

// Open starts (or joins) the servers of cfgs, in parallel and in the background, and returns at
// once. A server that cannot start is reported through notify when its start fails.
func (p *Pool) Open(cfgs []Config, builtin *tools.Registry, notify Notify) *Set {
	return p.OpenSignIn(cfgs, builtin, notify, nil)
}

// OpenSignIn is Open with signIn hearing of the servers that need the user to sign in (instead
// of a notice that they are not available).
func (p *Pool) OpenSignIn(cfgs []Config, builtin *tools.Registry, notify Notify, signIn SignInNeeded) *Set {
	s := &Set{pool: p, builtin: builtin, notify: notify, signIn: signIn, done: make(chan struct{})}
	for _, c := range cfgs {
		s.Add(c)
	}
	return s
}

// Add starts (or joins) one more server, which the next snapshot includes. A closed set ignores
// it.
func (s *Set) Add(c Config) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	sv := s.pool.acquire(c)
	s.servers = append(s.servers, sv)
	s.mu.Unlock()
	go func() {
		<-sv.ready
		sv.mu.Lock()
		err := sv.err
		failed := sv.state == StateFailed && !sv.closed
		sv.mu.Unlock()
		if failed {
			s.reportDown(sv, err)
		}
	}()
}

// Done is closed when the set is closed.
func (s *Set) Done() <-chan struct{} { return s.done }

// reportDown says, once per distinct failure, that a server's tools are not available.
func (s *Set) reportDown(sv *server, err error) {
	s.mu.Lock()
	if s.reported == nil {
		s.reported = map[*server]string{}
	}
	msg := fmt.Sprint(err)
	skip := s.closed || s.notify == nil || s.reported[sv] == msg
	s.reported[sv] = msg
	signIn := s.signIn
	s.mu.Unlock()
	if !skip && signIn != nil && mcpauth.IsNeedsSignIn(err) {
		signIn(sv.cfg.Name, err)
		return
	}
	if !skip {
		s.notify("warning", fmt.Sprintf("MCP server %s is not available", sv.cfg.Name), msg+"; its tools are skipped.")
	}
}

// Close releases the session's servers; a server no other session uses is stopped (its process
// group killed).
func (s *Set) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	servers := s.servers
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, sv := range servers {
		wg.Go(func() { s.pool.release(sv) })
	}
	wg.Wait()
}

// Snapshot returns the tool set of a turn: the built-in tools and the contributed ones, as one
// value the turn keeps to its end. It is rebuilt only when a server's tools changed (a start, a
// restart, a list_changed); the drops of a rebuild are logged and reported once. Servers still
// starting are waited for, bounded by ctx and their start timeout.
func (s *Set) Snapshot(ctx context.Context) *tools.Registry {
	s.mu.Lock()
	servers := s.servers
	s.mu.Unlock()
	if len(servers) == 0 {
		return s.builtin
	}
	lists := make([]listed, len(servers))
	var wg sync.WaitGroup
	for i, sv := range servers {
		wg.Go(func() {
			// A start is bounded by the pool's StartTimeout; the turn's ctx ends the wait sooner.
			tl, v, err := sv.prepare(ctx)
			lists[i] = listed{sv: sv, tools: tl, version: v, err: err}
		})
	}
	wg.Wait()
	versions := make([]int, len(lists))
	for i, l := range lists {
		versions[i] = l.version
	}
	for _, l := range lists {
		switch {
		case l.err != nil:
			s.reportDown(l.sv, l.err)
		case l.sv.auth != nil && l.sv.auth.NeedsSignIn() != nil:
			// A call found the token short (a step-up, a new authorization server): the
			// server stays up with what its token still allows, and the user is asked.
			s.reportDown(l.sv, l.sv.auth.NeedsSignIn())
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap != nil && equalInts(versions, s.versions) && s.snapGen == s.foundGen {
		return s.snap
	}
	reg, drops, over := build(s.builtin, lists, s.found)
	if len(over) > 0 {
		reg.Register(&findTools{set: s, over: over})
	}
	if withResources(lists) {
		reg.Register(&listResources{set: s})
		reg.Register(&readResourceTool{set: s})
	}
	rebuilt := s.snap != nil && equalInts(versions, s.versions)
	s.snap, s.versions, s.snapGen = reg, versions, s.foundGen
	if rebuilt {
		return reg // only find_tools' additions changed: what is dropped was reported already
	}
	if len(drops) > 0 {
		for _, d := range drops {
			s.pool.log.Info("MCP tool not offered", zap.String("mcpServer", d.Server), zap.String("tool", d.Tool), zap.String("reason", d.Reason))
		}
		if !s.closed && s.notify != nil {
			s.notify("info", fmt.Sprintf("%d MCP tools not offered to the model", len(drops)), dropSummary(drops))
		}
	}
	return reg
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func dropSummary(drops []Drop) string {
	var parts []string
	for i, d := range drops {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more (see the log)", len(drops)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %s (%s)", d.Server, d.Tool, d.Reason))
	}
	return strings.Join(parts, "; ")
}

// FoundGen counts the times find_tools added tools to the session: a turn that sees it change
// takes a new Snapshot before its next model call, so the tools found are offered at once.
func (s *Set) FoundGen() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.foundGen
}

// Status is one server as `agentd mcp list` shows it.
type Status struct {
	Name, Type, Target string
	State              State
	Err                error
	Listed, Offered    int // tools the server lists; tools that reach the model after the rules
	// NeedsSignIn says the server asked for authorization and no token is stored.
	NeedsSignIn bool
}

// Status reports each server after a snapshot (call Snapshot first).
func (s *Set) Status() []Status {
	s.mu.Lock()
	servers, snap := s.servers, s.snap
	s.mu.Unlock()
	offered := map[*server]int{}
	if snap != nil {
		for _, t := range snap.List() {
			if mt, ok := t.(*Tool); ok {
				offered[mt.sv]++
			}
		}
	}
	var out []Status
	for _, sv := range servers {
		sv.mu.Lock()
		typ := sv.cfg.Type
		if sv.cfg.SSE {
			typ = "sse"
		}
		out = append(out, Status{Name: sv.cfg.Name, Type: typ, Target: sv.cfg.Target(), State: sv.state, Err: sv.err,
			Listed: len(sv.tools), Offered: offered[sv], NeedsSignIn: mcpauth.IsNeedsSignIn(sv.err) || (sv.auth != nil && sv.auth.NeedsSignIn() != nil)})
		sv.mu.Unlock()
	}
	return out
}

// SignIn signs server name of the set in with the user through open (the editor's
// window/showDocument, the ACP door's message, a terminal's print) and starts it again with the
// token; its tools join the next turn.
func (s *Set) SignIn(ctx context.Context, name string, open mcpauth.Opener) error {
	s.mu.Lock()
	var sv *server
	for _, x := range s.servers {
		if x.cfg.Name == name {
			sv = x
		}
	}
	s.mu.Unlock()
	if sv == nil {
		return fmt.Errorf("this session has no MCP server %q", name)
	}
	if err := sv.signIn(ctx, open); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.reported, sv) // a later failure is news again
	s.mu.Unlock()
	return nil
}
