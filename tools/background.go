package tools

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Background programs (run_program {background: true}): a dev server, a watcher, a long test
// run. They outlive the turn, not the session: the session's Programs is closed with it, and
// every one of them is in the running registry that KillLeftovers empties when agentd exits (and,
// on Linux, each dies with agentd even by SIGKILL: Pdeathsig, as the MCP servers do).

// Limits of the background programs of one session.
const (
	MaxBackground  = 8
	backgroundRing = 1 << 20
)

// Programs is one session's background programs.
type Programs struct {
	mu     sync.Mutex
	m      map[string]*bgProgram
	next   int
	closed bool
}

// NewPrograms returns an empty table.
func NewPrograms() *Programs { return &Programs{m: map[string]*bgProgram{}} }

type bgProgram struct {
	id     string
	argv   []string
	dir    string
	boxed  bool
	callID string
	// ended, when set, is told once the program has ended (Env.ProgramEnded).
	ended  func(ProgramInfo)
	cmd    *exec.Cmd
	cancel context.CancelFunc // kills the group (cmd.Cancel)
	token  string
	done   chan struct{}

	mu      sync.Mutex
	buf     []byte // the latest output not yet read, at most backgroundRing bytes
	dropped int    // bytes dropped from buf since the last read
	exit    int
	err     error
	stopped bool
}

func (p *bgProgram) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	if over := len(p.buf) - backgroundRing; over > 0 {
		p.dropped += over
		p.buf = append(p.buf[:0], p.buf[over:]...)
	}
	return len(b), nil
}

// Close stops every program of the table and refuses new ones.
func (ps *Programs) Close() {
	ps.mu.Lock()
	ps.closed = true
	all := make([]*bgProgram, 0, len(ps.m))
	for _, p := range ps.m {
		all = append(all, p)
	}
	ps.mu.Unlock()
	for _, p := range all {
		p.stop()
	}
}

func (p *bgProgram) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	select {
	case <-p.done:
	default:
		p.cancel()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
	}
}

func (p *bgProgram) state() string {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.stopped {
			return "stopped"
		}
		return "exited"
	default:
		return "running"
	}
}

// ProgramInfo is what a client sees of one background program (agent/x/programs/list).
type ProgramInfo struct {
	ID, Dir, State, ToolCallID string
	Argv                       []string
	// Exit is the exit code once State is not "running".
	Exit      int
	Sandboxed bool
}

func (p *bgProgram) info() ProgramInfo {
	st := p.state()
	p.mu.Lock()
	defer p.mu.Unlock()
	return ProgramInfo{ID: p.id, Dir: p.dir, State: st, ToolCallID: p.callID, Argv: p.argv, Exit: p.exit, Sandboxed: p.boxed}
}

// List is every program of the table, oldest first.
func (ps *Programs) List() []ProgramInfo {
	ps.mu.Lock()
	all := make([]*bgProgram, 0, len(ps.m))
	for _, p := range ps.m {
		all = append(all, p)
	}
	ps.mu.Unlock()
	out := make([]ProgramInfo, 0, len(all))
	for _, p := range all {
		out = append(out, p.info())
	}
	slices.SortFunc(out, func(a, b ProgramInfo) int { return cmp.Compare(progNum(a.ID), progNum(b.ID)) })
	return out
}

func progNum(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "prog_"))
	return n
}

// Stop ends the program id (the user's stop: it asks nothing) and says what became of it; ok
// is false when the table has no such program.
func (ps *Programs) Stop(id string) (info ProgramInfo, ok bool) {
	ps.mu.Lock()
	p, ok := ps.m[id]
	ps.mu.Unlock()
	if !ok {
		return ProgramInfo{}, false
	}
	p.stop()
	return p.info(), true
}

// startBackground starts the program and returns at once with its id.
func startBackground(env *Env, spec execSpec) Result {
	ps := env.Programs
	ps.mu.Lock()
	if ps.closed {
		ps.mu.Unlock()
		return Errorf("the session is closing; no program was started")
	}
	n := 0
	for _, p := range ps.m {
		if p.state() == "running" {
			n++
		}
	}
	if n >= MaxBackground {
		ps.mu.Unlock()
		return Errorf("%d background programs are running, the most a session may have; stop one with program_stop first", n)
	}
	ps.next++
	id := fmt.Sprintf("prog_%d", ps.next)
	ps.mu.Unlock()

	// The context is the program's life: program_stop and the session's end cancel it, which
	// kills its process group (cmd.Cancel, below); a turn's end does not.
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir = spec.Dir
	token := rand.Text()
	cmd.Env = mergeEnv(withoutKeys(os.Environ(), env.HideEnv), map[string]string{"PAGER": "cat", "GIT_PAGER": "cat", "NO_COLOR": "1", "TERM": "dumb"}, spec.Env, map[string]string{runTagVar: token})
	if spec.Stdin != "" {
		cmd.Stdin = strings.NewReader(spec.Stdin)
	}
	p := &bgProgram{id: id, argv: spec.Argv, dir: spec.Dir, boxed: spec.Box.state == SandboxApplied, callID: env.ToolCallID, ended: env.ProgramEnded,
		cmd: cmd, cancel: cancel, token: token, done: make(chan struct{}), exit: -1}
	cmd.Stdout, cmd.Stderr = p, p
	setProcessGroup(cmd)
	dieWithAgentd(cmd)
	cleanup, err := spec.Box.wrap(cmd)
	if err != nil {
		cancel()
		return Errorf("the sandbox could not be set up: %v. The program was not run", err)
	}
	killAll := cmd.Cancel
	cmd.Cancel = func() error {
		err := killAll()
		sweepTagged(token)
		return err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		cleanup()
		return Errorf("could not start the program: %v", err)
	}
	track(cmd, token)
	ps.mu.Lock()
	ps.m[id] = p
	ps.mu.Unlock()
	go func() {
		err := cmd.Wait()
		killGroup(cmd)
		sweepTagged(token)
		untrack(cmd)
		cancel()
		cleanup()
		p.mu.Lock()
		if cmd.ProcessState != nil {
			p.exit = cmd.ProcessState.ExitCode()
		}
		p.err = err
		p.mu.Unlock()
		close(p.done)
		if p.ended != nil {
			p.ended(p.info())
		}
	}()
	return Result{Output: fmt.Sprintf("$ %s\n[started in the background as %s; read its output with program_output, end it with program_stop]\n", quoteArgv(spec.Argv), id),
		Raw: map[string]any{"programId": id}}
}

type programIn struct {
	ProgramID string `json:"program_id" schema:"maxLength=64"`
}

func (in programIn) title() string { return in.ProgramID }

// ProgramOutput is the program_output tool. It changes nothing (effect read).
var ProgramOutput Tool = &typed[programIn]{spec: Spec{Name: "program_output", Effect: EffectRead, Kind: "execute", Title: "Program output"}, run: programOutput}

// ProgramStop is the program_stop tool. Ending a program the model started changes nothing in
// the project (effect read: it never asks, and works in plan mode).
var ProgramStop Tool = &typed[programIn]{spec: Spec{Name: "program_stop", Effect: EffectRead, Kind: "execute", Title: "Stop program"}, run: programStop}

func lookupProgram(env *Env, id string) (*bgProgram, *Result) {
	if env.Programs == nil {
		r := Errorf("background programs are not available here")
		return nil, &r
	}
	env.Programs.mu.Lock()
	p, ok := env.Programs.m[id]
	var ids []string
	for k := range env.Programs.m {
		ids = append(ids, k)
	}
	env.Programs.mu.Unlock()
	if !ok {
		r := Errorf("field program_id: no background program %q in this session (there are: %s)", id, strings.Join(ids, ", "))
		return nil, &r
	}
	return p, nil
}

func programOutput(ctx context.Context, env *Env, in programIn) Result {
	p, bad := lookupProgram(env, in.ProgramID)
	if bad != nil {
		return *bad
	}
	state := p.state()
	p.mu.Lock()
	out, dropped, exit := strings.ToValidUTF8(string(p.buf), "�"), p.dropped, p.exit
	p.buf, p.dropped = p.buf[:0], 0
	p.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "$ %s   [%s: %s", quoteArgv(p.argv), p.id, state)
	if state != "running" {
		fmt.Fprintf(&b, ", exit code %d", exit)
	}
	b.WriteString("]\n")
	if dropped > 0 {
		fmt.Fprintf(&b, "[… %d earlier bytes of output dropped …]\n", dropped)
	}
	b.WriteString(out)
	raw := map[string]any{"programId": p.id, "state": state, "output": out, "droppedBytes": dropped}
	if state != "running" {
		raw["exitCode"] = exit
	}
	return Result{Output: b.String(), Raw: raw}
}

func programStop(ctx context.Context, env *Env, in programIn) Result {
	p, bad := lookupProgram(env, in.ProgramID)
	if bad != nil {
		return *bad
	}
	was := p.state()
	p.stop()
	if was != "running" {
		return Result{Output: fmt.Sprintf("%s had already %s", p.id, was), Raw: map[string]any{"programId": p.id, "state": p.state()}}
	}
	return Result{Output: fmt.Sprintf("%s stopped (it and everything it started were killed)", p.id), Raw: map[string]any{"programId": p.id, "state": p.state()}}
}
