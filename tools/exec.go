package tools

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentd-dev/agentd/workspace"
)

// The program runner shared by run_program, add_dependency and edit_module_config: its own process
// group, killed whole on timeout or cancel; stdout and stderr interleaved into one capped buffer
// and streamed through env.Progress; never agentd's own stdout, which carries the protocol.

type execSpec struct {
	Argv      []string
	Dir       string
	Env       map[string]string
	Stdin     string
	Timeout   time.Duration
	MaxOutput int
	// Box says whether the program runs in the sandbox (tools/sandbox.go).
	Box sandboxChoice
}

type execResult struct {
	ExitCode  int
	Output    string
	CutBytes  int
	TimedOut  bool
	Cancelled bool
	Duration  time.Duration
	StartErr  error
}

var errTimedOut = errors.New("timed out")

// streamCap bounds what one call streams to the client.
const streamCap = 1 << 20

func runCommand(ctx context.Context, env *Env, spec execSpec) execResult {
	runCtx, cancel := context.WithTimeoutCause(ctx, spec.Timeout, errTimedOut)
	defer cancel()
	// The client's terminal runs programs with its own rights: never for a sandboxed one.
	if t, ok := env.WS.(workspace.Terminal); ok && spec.Stdin == "" && spec.Box.state != SandboxApplied {
		if res, ok := runInTerminal(ctx, runCtx, t, env, spec); ok {
			return res
		}
	}
	cmd := exec.CommandContext(runCtx, spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir = spec.Dir
	// AGENTD_RUN tags everything the program starts, so what leaves its process group can still
	// be found (sweepTagged); it comes last so the model's env cannot untag a run.
	token := rand.Text()
	cmd.Env = mergeEnv(withoutKeys(os.Environ(), env.HideEnv), map[string]string{"PAGER": "cat", "GIT_PAGER": "cat", "NO_COLOR": "1", "TERM": "dumb"}, spec.Env, map[string]string{runTagVar: token})
	if spec.Stdin != "" {
		cmd.Stdin = strings.NewReader(spec.Stdin)
	}
	out := &capture{max: spec.MaxOutput, progress: env.Progress}
	// Our own pipe rather than exec's: Wait then returns when the program exits, not when the
	// last process holding its output does, and the group is killed at once (below).
	pr, pw, err := os.Pipe()
	if err != nil {
		return execResult{StartErr: err, ExitCode: -1}
	}
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	setProcessGroup(cmd)
	cleanup, err := spec.Box.wrap(cmd)
	if err != nil {
		pw.Close()
		return execResult{StartErr: fmt.Errorf("the sandbox could not be set up: %w", err), ExitCode: -1}
	}
	defer cleanup()
	killAll := cmd.Cancel
	cmd.Cancel = func() error {
		err := killAll()
		sweepTagged(token)
		return err
	}
	// The stdin copier may be stuck behind a grandchild; stop waiting for it.
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return execResult{StartErr: err, ExitCode: -1}
	}
	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(copied)
	}()
	track(cmd, token)
	err = cmd.Wait()
	res := execResult{Duration: time.Since(start), ExitCode: -1}
	// The program is done: what it left running in the background (`cmd &`, nohup) goes with
	// it, and so, where it can be found, does what left the group (setsid).
	killGroup(cmd)
	sweepTagged(token)
	untrack(cmd)
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		// A process we could not find still holds the pipe; stop reading.
		pr.Close()
		<-copied
	}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	out.flush()
	res.Output, res.CutBytes = out.text()
	switch {
	case context.Cause(runCtx) == errTimedOut && ctx.Err() == nil:
		res.TimedOut = true
	case ctx.Err() != nil:
		res.Cancelled = true
	case err != nil && res.ExitCode == -1:
		res.StartErr = err
	}
	return res
}

// runInTerminal runs the program in the client's terminal (the ACP door's terminal/*); ok is
// false when the client has none, and the caller runs it itself. The key variables are hidden by
// setting them empty: the terminal's environment is the client's.
func runInTerminal(ctx, runCtx context.Context, t workspace.Terminal, env *Env, spec execSpec) (execResult, bool) {
	vars := map[string]string{"PAGER": "cat", "GIT_PAGER": "cat", "NO_COLOR": "1", "TERM": "dumb"}
	for _, k := range env.HideEnv {
		vars[k] = ""
	}
	maps.Copy(vars, spec.Env)
	r, err := t.RunProgram(runCtx, workspace.Program{Argv: spec.Argv, Dir: spec.Dir, Env: vars, MaxOutput: spec.MaxOutput})
	if errors.Is(err, workspace.ErrUnsupported) {
		return execResult{}, false
	}
	res := execResult{ExitCode: r.ExitCode, Output: r.Output, Duration: r.Duration}
	if r.Truncated {
		res.CutBytes = 1
	}
	if r.Signal != "" && res.ExitCode == -1 {
		res.Output += "\n(ended by signal " + r.Signal + ")"
	}
	if env.Progress != nil && r.Output != "" {
		env.Progress(r.Output)
	}
	switch {
	case context.Cause(runCtx) == errTimedOut && ctx.Err() == nil:
		res.TimedOut = true
	case ctx.Err() != nil:
		res.Cancelled = true
	case err != nil:
		res.StartErr = err
	}
	return res, true
}

// runTagVar is the variable that marks a run's processes.
const runTagVar = "AGENTD_RUN"

// withoutKeys drops the variables hide names (Env.HideEnv) from an environment. Names compare
// without case, as Windows does.
func withoutKeys(environ, hide []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		drop := func(v string) bool { return strings.EqualFold(v, k) }
		if slices.ContainsFunc(hide, drop) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func mergeEnv(base []string, layers ...map[string]string) []string {
	m := map[string]string{}
	var order []string
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := m[k]; !dup {
			order = append(order, k)
		}
		m[k] = v
	}
	for _, l := range layers {
		keys := make([]string, 0, len(l))
		for k := range l {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, dup := m[k]; !dup {
				order = append(order, k)
			}
			m[k] = l[k]
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+m[k])
	}
	return out
}

// capture keeps the first and last max/2 bytes of the output and streams it as it comes,
// coalesced: a chunk goes out when 8 KiB have gathered or 100 ms after the first unsent byte, so
// a program writing a line at a time does not become thousands of notifications.
type capture struct {
	mu       sync.Mutex
	max      int
	head     []byte
	tail     []byte // ring of the latest bytes once head is full
	total    int
	progress func(string)
	unsent   []byte
	timer    *time.Timer
	streamed int
	closed   bool
}

const (
	streamChunk = 8 << 10
	streamDelay = 100 * time.Millisecond
)

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += len(p)
	half := c.max / 2
	rest := p
	if room := half - len(c.head); room > 0 {
		n := min(room, len(rest))
		c.head = append(c.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		c.tail = append(c.tail, rest...)
		if len(c.tail) > half {
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-half:]...)
		}
	}
	if c.progress == nil || c.closed || c.streamed >= streamCap {
		return len(p), nil
	}
	c.unsent = append(c.unsent, p...)
	if len(c.unsent) >= streamChunk {
		c.sendLocked(false)
	} else if c.timer == nil {
		c.timer = time.AfterFunc(streamDelay, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.timer = nil
			if !c.closed {
				c.sendLocked(false)
			}
		})
	}
	return len(p), nil
}

// sendLocked streams the unsent bytes, holding back an incomplete UTF-8 sequence unless final.
func (c *capture) sendLocked(final bool) {
	cut := len(c.unsent)
	if !final {
		for cut > 0 && cut > len(c.unsent)-utf8.UTFMax && !utf8.FullRune(c.unsent[lastRuneStart(c.unsent[:cut]):cut]) {
			cut = lastRuneStart(c.unsent[:cut])
		}
	}
	if cut == 0 {
		return
	}
	chunk := c.unsent[:min(cut, streamCap-c.streamed)]
	c.streamed += len(chunk)
	c.progress(string(chunk))
	c.unsent = append(c.unsent[:0], c.unsent[cut:]...)
}

func lastRuneStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return max(i, 0)
}

// flush streams what is left once the program has exited; nothing is streamed after it.
func (c *capture) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if c.progress != nil && !c.closed && c.streamed < streamCap {
		c.sendLocked(true)
	}
	c.closed = true
}

func (c *capture) text() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := len(c.head) + len(c.tail)
	cut := c.total - kept
	if cut <= 0 {
		return strings.ToValidUTF8(string(c.head)+string(c.tail), "�"), 0
	}
	return strings.ToValidUTF8(string(c.head), "�") + fmt.Sprintf("\n[… %d bytes of output cut …]\n", cut) + strings.ToValidUTF8(string(c.tail), "�"), cut
}

// quoteArgv shows a command line the way a POSIX shell would read it.
func quoteArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}~#!") {
			parts[i] = a
			continue
		}
		parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(parts, " ")
}

// QuoteArgv is quoteArgv for the other packages that show a command line (a grant's label).
func QuoteArgv(argv []string) string { return quoteArgv(argv) }

// formatExec is the model's view of a finished program.
func formatExec(env *Env, argv []string, dir string, res execResult, timeout time.Duration, note string) Result {
	var b strings.Builder
	fmt.Fprintf(&b, "$ %s", quoteArgv(argv))
	if d := rel(env, dir); d != "." {
		fmt.Fprintf(&b, "   (in %s)", d)
	}
	b.WriteString("\n")
	if note != "" {
		fmt.Fprintf(&b, "[%s]\n", note)
	}
	raw := map[string]any{"exitCode": res.ExitCode, "timedOut": res.TimedOut, "cancelled": res.Cancelled, "durationMs": res.Duration.Milliseconds(), "cutBytes": res.CutBytes}
	if res.StartErr != nil {
		b.WriteString(fmt.Sprintf("could not start the program: %v\n", res.StartErr))
		raw["error"] = res.StartErr.Error()
		return Result{Output: b.String(), IsError: true, Raw: raw}
	}
	b.WriteString(res.Output)
	if res.Output != "" && !strings.HasSuffix(res.Output, "\n") {
		b.WriteString("\n")
	}
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "[timed out after %s: the program and everything it started were killed; raise timeout_seconds or run something shorter]\n", timeout)
	case res.Cancelled:
		b.WriteString("[cancelled: the program and everything it started were killed]\n")
	default:
		fmt.Fprintf(&b, "[exit code %d after %s]\n", res.ExitCode, res.Duration.Round(time.Millisecond))
	}
	raw["output"] = res.Output
	return Result{Output: b.String(), IsError: res.TimedOut || res.Cancelled, Raw: raw}
}
