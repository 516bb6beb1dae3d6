package main

// `agentd exec` runs one turn headless on a directory: the same session manager as the daemon,
// the disk workspace instead of the editor, and a terminal client that streams the transcript
// (or NDJSON with --json) and asks permission on the terminal.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/replay"
	"github.com/agentd-dev/agentd/rpc"
	"github.com/agentd-dev/agentd/rpc/protocol"
	"github.com/agentd-dev/agentd/session"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

const execUsage = `usage: agentd exec [flags] PROMPT
       agentd exec --demo [flags]

Runs one agent turn on a directory without an editor, reading and editing files on disk.
Permission prompts are asked on the terminal; when stdin is not a terminal they are denied
unless --mode auto. Exit status 0 when the turn ends normally (end_turn).

--demo copies the bundled demo project (testdata/demo) to a temporary directory and runs a whole
turn on it; with no API key configured it uses the recorded replay provider, so nothing leaves
the machine and the repository is never modified.

flags:
`

// Exit codes of agentd exec.
const (
	exitOK        = 0
	exitFailed    = 1 // the provider failed, or setup failed
	exitUsage     = 2
	exitStopped   = 3 // the turn ended otherwise: max_tokens, max_turn_requests, refusal
	exitCancelled = 130
)

func runExec(args []string) int {
	return execMain(args, os.Stdin, os.Stdout, os.Stderr)
}

func execMain(args []string, stdin, stdout *os.File, stderr io.Writer) int {
	fl := flag.NewFlagSet("agentd exec", flag.ContinueOnError)
	fl.SetOutput(stderr)
	mode := fl.String("mode", "", "permission mode for this run: ask, auto or plan (default: the project's mode, else ask)")
	jsonOut := fl.Bool("json", false, "write NDJSON events (session updates, permission requests, the result) to stdout")
	cwd := fl.String("cwd", "", "directory to work in (default: the current directory)")
	trace := fl.String("trace", "", "write a JSONL agent trace of the run to `FILE`")
	providerID := fl.String("provider", "", "providerId from the settings (default: the settings' provider)")
	script := fl.String("replay", "", "play the model's side from a replay `SCRIPT` instead of calling a provider")
	demo := fl.Bool("demo", false, "run the bundled demo on a temporary copy of testdata/demo")
	demoDir := fl.String("demo-dir", "", "where the demo lives (default: testdata/demo found from the current directory up)")
	fl.Usage = func() {
		fmt.Fprint(stderr, execUsage)
		fl.PrintDefaults()
	}
	// Flags may come before or after the prompt's words: `agentd exec "fix it" --mode auto`.
	var words []string
	for rest := args; ; {
		if err := fl.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitUsage
		}
		rest = fl.Args()
		if len(rest) == 0 {
			break
		}
		words, rest = append(words, rest[0]), rest[1:]
	}
	if *mode != "" && *mode != session.ModeAsk && *mode != session.ModeAuto && *mode != session.ModePlan {
		fmt.Fprintf(stderr, "agentd exec: --mode %q is not one of ask, auto, plan\n", *mode)
		return exitUsage
	}
	prompt := strings.TrimSpace(strings.Join(words, " "))

	store := config.NewStore()
	if err := store.LoadFile(config.LayerUser, config.UserConfigPath()); err != nil {
		fmt.Fprintf(stderr, "agentd exec: %v\n", err)
		return exitFailed
	}

	out := newTermClient(stdout, stdin, stderr, *jsonOut)
	if *demo {
		dir, err := findDemo(*demoDir)
		if err != nil {
			fmt.Fprintf(stderr, "agentd exec --demo: %v\n", err)
			return exitFailed
		}
		tmp, err := os.MkdirTemp("", "agentd-demo-")
		if err != nil {
			fmt.Fprintf(stderr, "agentd exec --demo: %v\n", err)
			return exitFailed
		}
		if err := os.CopyFS(tmp, os.DirFS(filepath.Join(dir, "project"))); err != nil {
			fmt.Fprintf(stderr, "agentd exec --demo: %v\n", err)
			return exitFailed
		}
		*cwd = tmp
		if prompt == "" {
			b, err := os.ReadFile(filepath.Join(dir, "prompt.txt"))
			if err != nil {
				fmt.Fprintf(stderr, "agentd exec --demo: %v\n", err)
				return exitFailed
			}
			prompt = strings.TrimSpace(string(b))
		}
		out.info("Demo project copied to %s (the repository is not touched).", tmp)
		if *script == "" && *providerID == "" {
			if id := demoProvider(store); id != "" {
				*providerID = id
				out.info("Using the configured provider %q.", id)
			} else {
				*script = filepath.Join(dir, "replay.json")
				out.info("No API key configured: the model's side is replayed from %s.", *script)
			}
		}
	}
	if prompt == "" {
		fl.Usage()
		return exitUsage
	}
	if *cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			fmt.Fprintf(stderr, "agentd exec: %v\n", err)
			return exitFailed
		}
		*cwd = wd
	}
	abs, err := filepath.Abs(*cwd)
	if err != nil {
		fmt.Fprintf(stderr, "agentd exec: %v\n", err)
		return exitFailed
	}
	if err := store.LoadFile(config.LayerProject, config.ProjectConfigPath(abs)); err != nil {
		var fk *config.ForbiddenKeysError
		if !errors.As(err, &fk) {
			fmt.Fprintf(stderr, "agentd exec: %v\n", err)
			return exitFailed
		}
		fmt.Fprintf(stderr, "agentd exec: %v\n", err)
	}
	flags := map[string]any{}
	if *trace != "" {
		flags["trace"] = *trace
	}
	if *providerID != "" {
		flags["provider"] = *providerID
	}
	scriptPath := ""
	if *script != "" {
		// The script path stays out of the settings, whose baseUrl must be a network URL.
		scriptPath, _ = filepath.Abs(*script)
		replay.Rewind(scriptPath)
		flags["provider"] = "replay"
		flags["providers"] = map[string]any{"replay": map[string]any{"apiType": replay.APIType, "model": "replay"}}
	}
	if len(flags) > 0 {
		b, _ := json.Marshal(flags)
		if err := store.Set(config.LayerFlags, b); err != nil {
			fmt.Fprintf(stderr, "agentd exec: %v\n", err)
			return exitUsage
		}
	}

	reg := newRegistry()
	src := &execProviders{rpc: &rpc.ProviderSource{Settings: store, Registry: reg, Secrets: rpc.DefaultSecretStore()}, store: store, reg: reg, script: scriptPath}
	m := session.NewManager(session.Deps{
		Client:     out,
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return workspace.NewDisk() },
		Providers:  src,
		Tools:      tools.Default(),
		Settings:   store.Get,
		StateDir:   config.StateDir(),
		Logger:     zap.NewNop(),
	})
	defer m.Shutdown(context.Background())

	params := protocol.SessionNewParams{Cwd: abs}
	if *mode != "" {
		params.Meta = protocol.Meta{"agentd/mode": *mode}
	}
	ns, err := m.New(context.Background(), params)
	if err != nil {
		fmt.Fprintf(stderr, "agentd exec: %v\n", err)
		return exitFailed
	}
	out.start(abs, ns.Modes.CurrentModeID, prompt)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer func() {
		signal.Stop(sigs) // no delivery after this returns, so closing is safe
		close(sigs)       // and ends the watcher below
	}()
	go func() {
		n := 0
		for range sigs {
			n++
			if n > 1 {
				os.Exit(exitCancelled)
			}
			out.info("Cancelling… (press Ctrl-C again to quit at once)")
			m.Cancel(ns.SessionID)
		}
	}()

	res, err := m.Prompt(ctx, protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock(prompt)}})
	if err != nil {
		fmt.Fprintf(stderr, "agentd exec: %v\n", err)
		return exitFailed
	}
	out.result(res)
	switch {
	case res.Meta["agentd/error"] != nil:
		return exitFailed
	case res.StopReason == protocol.StopEndTurn:
		return exitOK
	case res.StopReason == protocol.StopCancelled:
		return exitCancelled
	}
	return exitStopped
}

// execProviders resolves providers like the daemon does, except replay scripts, whose baseUrl is
// a file rather than a network endpoint.
type execProviders struct {
	rpc    *rpc.ProviderSource
	store  *config.Store
	reg    *providers.Registry
	script string // --replay / the demo's script, used for a replay provider without a baseUrl
}

func (p *execProviders) Provider(ctx context.Context, id string) (providers.Provider, providers.Config, error) {
	st := p.store.Get()
	if id == "" {
		id = st.Provider
	}
	if ps, ok := st.Providers[id]; ok && ps.APIType == replay.APIType {
		cfg := providers.Config{ID: id, APIType: ps.APIType, BaseURL: ps.BaseURL, Model: ps.Model}
		if cfg.BaseURL == "" {
			cfg.BaseURL = p.script
		}
		prov, err := p.reg.New(cfg)
		return prov, cfg, err
	}
	return p.rpc.Provider(ctx, id)
}

// demoProvider picks the provider the demo talks to: the default one when it has a key or needs
// none (a local server such as Ollama), else the first remote one with a key; "" means none.
func demoProvider(store *config.Store) string {
	st := store.Get()
	src := &rpc.ProviderSource{Settings: store, Registry: newRegistry(), Secrets: rpc.DefaultSecretStore()}
	infos := src.List(context.Background())
	for _, info := range infos {
		if info.ProviderID == st.Provider && (info.KeyStatus == protocol.KeySet || info.KeyStatus == protocol.KeyNotNeeded || info.APIType == replay.APIType) {
			return info.ProviderID
		}
	}
	for _, info := range infos {
		// A local server is only used when it is the default: it may not be running.
		if ep, err := providers.CheckEndpoint(info.BaseURL); err == nil && !ep.Local && info.KeyStatus == protocol.KeySet {
			return info.ProviderID
		}
	}
	return ""
}

// findDemo locates testdata/demo: the flag, else from the current directory up.
func findDemo(flagDir string) (string, error) {
	if flagDir != "" {
		if _, err := os.Stat(filepath.Join(flagDir, "replay.json")); err != nil {
			return "", fmt.Errorf("--demo-dir %s: %w", flagDir, err)
		}
		return flagDir, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		cand := filepath.Join(dir, "testdata", "demo")
		if _, err := os.Stat(filepath.Join(cand, "replay.json")); err == nil {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testdata/demo not found from the current directory up; run from the agentd repository or pass --demo-dir")
		}
		dir = parent
	}
}

// ---- the terminal client ----

// termClient is session.Client on a terminal: it prints the transcript as it streams (or NDJSON
// with --json) and asks permission on the terminal when stdin is one.
type termClient struct {
	mu      sync.Mutex
	w       io.Writer
	errw    io.Writer
	in      *bufio.Reader
	tty     bool
	color   bool
	json    bool
	mode    string
	cwd     string
	inText  bool // the cursor is after streamed text
	inThink bool
	done    bool // the result was printed; later updates (a late title) are dropped
	calls   map[string]*termCall
}

type termCall struct {
	title, kind string
	diffShown   bool // the permission prompt showed the diff already
}

func newTermClient(w *os.File, in *os.File, errw io.Writer, jsonOut bool) *termClient {
	return &termClient{
		w:     w,
		errw:  errw,
		in:    bufio.NewReader(in),
		tty:   isTerminal(in),
		color: isTerminal(w) && os.Getenv("NO_COLOR") == "" && !jsonOut,
		json:  jsonOut,
		calls: map[string]*termCall{},
	}
}

// start shows what runs where, then the prompt, as the transcript's first line.
func (c *termClient) start(cwd, mode, prompt string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cwd, c.mode = cwd, mode
	if c.json {
		return
	}
	fmt.Fprintf(c.errw, "agentd: working in %s, mode %s\n", cwd, mode)
	fmt.Fprintf(c.w, "%s %s\n", c.style("1", "you:"), prompt)
}

func (c *termClient) style(code, s string) string {
	if !c.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// info prints a line about the run itself (not the transcript) to stderr.
func (c *termClient) info(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.errw, "agentd: "+format+"\n", args...)
}

func (c *termClient) emitJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	b = append(b, '\n')
	_, _ = c.w.Write(b)
}

// endLine ends streamed text before a block line; c.mu must be held.
func (c *termClient) endLine() {
	if c.inText || c.inThink {
		fmt.Fprintln(c.w)
		c.inText, c.inThink = false, false
	}
}

func (c *termClient) Update(sessionID string, u protocol.SessionUpdate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	if c.json {
		c.emitJSON(protocol.SessionNotification{SessionID: sessionID, Update: u})
		return
	}
	switch u.SessionUpdate {
	case protocol.UpdateAgentMessageChunk:
		if u.Content == nil {
			return
		}
		if c.inThink {
			fmt.Fprintln(c.w)
			c.inThink = false
		}
		c.inText = true
		fmt.Fprint(c.w, u.Content.Text)
	case protocol.UpdateAgentThoughtChunk:
		if u.Content == nil {
			return
		}
		if !c.inThink {
			c.endLine()
			fmt.Fprint(c.w, c.style("2;3", "thinking: "))
			c.inThink = true
		}
		fmt.Fprint(c.w, c.style("2;3", u.Content.Text))
	case protocol.UpdateUserMessageChunk:
		if u.Content != nil {
			c.endLine()
			fmt.Fprintf(c.w, "%s %s\n", c.style("1", "you:"), u.Content.Text)
		}
	case protocol.UpdateToolCall:
		c.endLine()
		c.calls[u.ToolCallID] = &termCall{title: u.Title, kind: u.Kind}
	case protocol.UpdateToolCallUpdate:
		tc := c.calls[u.ToolCallID]
		if tc == nil {
			tc = &termCall{}
			c.calls[u.ToolCallID] = tc
		}
		if u.Title != "" {
			tc.title = u.Title
		}
		switch u.Status {
		case protocol.StatusInProgress:
			c.endLine()
			fmt.Fprintf(c.w, "%s %s\n", c.style("36", "▸"), tc.title)
		case protocol.StatusCompleted:
			c.endLine()
			fmt.Fprintf(c.w, "  %s %s\n", c.style("32", "✓"), tc.title)
			for _, tcc := range u.ToolContent {
				if tcc.Type == "diff" && !tc.diffShown {
					c.printDiff(tcc)
				}
			}
		case protocol.StatusFailed:
			c.endLine()
			reason := ""
			for _, tcc := range u.ToolContent {
				if tcc.Type == "content" && tcc.Content != nil {
					reason = firstLine(tcc.Content.Text)
				}
			}
			fmt.Fprintf(c.w, "  %s %s: %s\n", c.style("31", "✗"), tc.title, reason)
		}
	case protocol.UpdatePlan:
		c.endLine()
		fmt.Fprintln(c.w, c.style("1", "plan:"))
		for _, e := range u.Entries {
			mark := "[ ]"
			switch e.Status {
			case "completed":
				mark = "[x]"
			case "in_progress":
				mark = "[~]"
			}
			fmt.Fprintf(c.w, "  %s %s\n", mark, e.Content)
		}
	case protocol.UpdateNotice:
		c.endLine()
		line := fmt.Sprintf("[%s] %s", u.Severity, u.NoticeTitle)
		if u.Description != "" {
			line += ": " + u.Description
		}
		fmt.Fprintln(c.errw, c.style("33", line))
	case protocol.UpdateCurrentModeUpdate:
		c.mode = u.ModeID
		c.endLine()
		fmt.Fprintf(c.errw, "agentd: mode is now %s\n", u.ModeID)
	case protocol.UpdateCompactionUpdate:
		if u.Status == "completed" {
			c.endLine()
			fmt.Fprintln(c.errw, "agentd: older turns were summarized to save context")
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip.String(s, 200, "…")
}

// printDiff prints a file change as a unified diff; c.mu must be held.
func (c *termClient) printDiff(d protocol.ToolCallContent) {
	var oldText, newText string
	if d.OldText != nil {
		oldText = *d.OldText
	}
	if d.NewText != nil {
		newText = *d.NewText
	}
	name := d.Path
	if rel, err := filepath.Rel(c.cwd, d.Path); err == nil && c.cwd != "" && !strings.HasPrefix(rel, "..") {
		name = rel
	}
	for _, l := range unifiedDiff(name, oldText, newText, d.OldText == nil, d.NewText == nil) {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			fmt.Fprintln(c.w, "    "+c.style("1", l))
		case strings.HasPrefix(l, "+"):
			fmt.Fprintln(c.w, "    "+c.style("32", l))
		case strings.HasPrefix(l, "-"):
			fmt.Fprintln(c.w, "    "+c.style("31", l))
		case strings.HasPrefix(l, "@@"):
			fmt.Fprintln(c.w, "    "+c.style("36", l))
		default:
			fmt.Fprintln(c.w, "    "+l)
		}
	}
}

func (c *termClient) CanAskPermission() bool { return c.tty }

// RequestPermission shows the change (or the command) and reads the answer from the terminal.
// In --json mode the request is written to stdout as an event and the question goes to stderr.
func (c *termClient) RequestPermission(ctx context.Context, p protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
	cancelled := protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "cancelled"}}
	c.mu.Lock()
	c.endLine()
	w := c.w
	if c.json {
		c.emitJSON(map[string]any{"permissionRequest": p})
		w = c.errw
	}
	fmt.Fprintf(w, "\n%s %s\n", c.style("1;33", "Permission needed:"), p.ToolCall.Title)
	if tc := c.calls[p.ToolCall.ToolCallID]; tc != nil && !c.json {
		tc.diffShown = true
	}
	for _, tcc := range p.ToolCall.ToolContent {
		if tcc.Type == "diff" {
			c.printDiffTo(w, tcc)
		}
	}
	if len(p.ToolCall.RawInput) > 0 {
		var cmd struct {
			Command []string `json:"command"`
			Cwd     string   `json:"cwd"`
		}
		if json.Unmarshal(p.ToolCall.RawInput, &cmd) == nil && len(cmd.Command) > 0 {
			fmt.Fprintf(w, "    $ %s\n    (in %s)\n", strings.Join(cmd.Command, " "), cmd.Cwd)
		}
	}
	for i, o := range p.Options {
		fmt.Fprintf(w, "  %d) %s\n", i+1, o.Name)
	}
	fmt.Fprintf(w, "Choose 1-%d [1]: ", len(p.Options))
	c.mu.Unlock()

	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := c.in.ReadString('\n')
		got <- line{s, err}
	}()
	var l line
	select {
	case <-ctx.Done():
		fmt.Fprintln(w)
		return cancelled, ctx.Err()
	case l = <-got:
	}
	if l.err != nil && strings.TrimSpace(l.s) == "" {
		return cancelled, nil
	}
	choice := 1
	if s := strings.TrimSpace(l.s); s != "" {
		if _, err := fmt.Sscanf(s, "%d", &choice); err != nil || choice < 1 || choice > len(p.Options) {
			fmt.Fprintln(w, "Not an option; rejecting.")
			for _, o := range p.Options {
				if o.Kind == "reject_once" {
					return protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "selected", OptionID: o.OptionID}}, nil
				}
			}
			return cancelled, nil
		}
	}
	res := protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "selected", OptionID: p.Options[choice-1].OptionID}}
	if c.json {
		c.mu.Lock()
		c.emitJSON(map[string]any{"permissionAnswer": res})
		c.mu.Unlock()
	}
	return res, nil
}

func (c *termClient) printDiffTo(w io.Writer, d protocol.ToolCallContent) {
	saved := c.w
	c.w = w
	c.printDiff(d)
	c.w = saved
}

func (c *termClient) result(res protocol.PromptResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	if c.json {
		c.emitJSON(map[string]any{"result": res})
		return
	}
	c.endLine()
	if em, ok := res.Meta["agentd/error"].(protocol.ErrorMeta); ok {
		fmt.Fprintf(c.errw, "agentd: the model request failed (%s): %s\n", em.Kind, em.Message)
	}
	if res.StopReason != protocol.StopEndTurn {
		fmt.Fprintf(c.errw, "agentd: turn ended: %s\n", res.StopReason)
	}
	if res.Usage != nil {
		fmt.Fprintf(c.errw, "agentd: tokens: %d in, %d out\n", res.Usage.InputTokens, res.Usage.OutputTokens)
	}
}

// unifiedDiff renders old → new as unified diff lines with three lines of context.
func unifiedDiff(path, oldText, newText string, created, deleted bool) []string {
	a, b := splitLines(oldText), splitLines(newText)
	from, to := "a/"+strings.TrimPrefix(path, "/"), "b/"+strings.TrimPrefix(path, "/")
	if created {
		from = "/dev/null"
	}
	if deleted {
		to = "/dev/null"
	}
	out := []string{"--- " + from, "+++ " + to}
	if len(a)*len(b) > 4_000_000 {
		return append(out, fmt.Sprintf("@@ %d lines → %d lines (too large to show) @@", len(a), len(b)))
	}
	// LCS table on lines.
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte
		text string
		ai   int
		bi   int
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{' ', a[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, op{'+', b[j], i, j})
			j++
		}
	}
	const ctxLines = 3
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		start := max(k-ctxLines, 0)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run-end > 2*ctxLines || run == len(ops) {
				end = min(end+ctxLines, len(ops))
				break
			}
			end = run
		}
		ac, bc := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				ac++
			}
			if o.kind != '-' {
				bc++
			}
		}
		out = append(out, fmt.Sprintf("@@ -%d,%d +%d,%d @@", ops[start].ai+1, ac, ops[start].bi+1, bc))
		for _, o := range ops[start:end] {
			out = append(out, string(o.kind)+o.text)
		}
		k = end
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
