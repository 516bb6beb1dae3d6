// Package term is `agentd exec`'s client on a terminal: it implements session.Client by printing
// the transcript as it streams (or NDJSON with --json) and asking permission on the terminal.
// Everything the model or a server wrote is escaped before it is printed (see escape.go).
package term

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/protocol"
)

// Options configure a Client.
type Options struct {
	Out io.Writer // the transcript, or NDJSON events with JSON
	Err io.Writer // lines about the run itself, notices, and the question in JSON mode
	In  io.Reader // permission answers
	// Ask: In is a terminal someone answers on. Without it every permission request is refused
	// by the session (CanAskPermission is false).
	Ask   bool
	Color bool
	JSON  bool
}

// Client is session.Client on a terminal. Its methods are safe to call concurrently.
type Client struct {
	mu      sync.Mutex
	w       io.Writer
	errw    io.Writer
	in      *bufio.Reader
	pending chan line // the read of an answer in flight, left by a question given up on
	eof     bool      // in has ended: every later question is cancelled
	ask     bool
	color   bool
	json    bool
	cwd     string
	inText  bool // the cursor is after streamed text
	inThink bool
	done    bool // the result was printed; later updates are dropped
	// errorShown is the text of the error notices printed, so the result does not repeat one.
	errorShown string
	calls      map[string]*call
	// cost is the session's cost as the last usage_update that carried one said (nil: the
	// model's price is not known).
	cost *protocol.Cost
}

type call struct {
	title     string
	diffShown bool // the permission prompt showed the diff already
}

// line is one answer read from the terminal.
type line struct {
	s   string
	err error
}

// New returns a client writing to o.Out and o.Err.
func New(o Options) *Client {
	return &Client{
		w:     o.Out,
		errw:  o.Err,
		in:    bufio.NewReader(o.In),
		ask:   o.Ask,
		color: o.Color && !o.JSON,
		json:  o.JSON,
		calls: map[string]*call{},
	}
}

// Start shows what runs where, then the prompt, as the transcript's first line.
func (c *Client) Start(cwd, mode, prompt string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cwd = cwd
	if c.json {
		return
	}
	fmt.Fprintf(c.errw, "agentd: working in %s, mode %s\n", safeLine(cwd), safeLine(mode))
	fmt.Fprintf(c.w, "%s %s\n", c.style("1", "you:"), safeText(prompt))
}

// Info prints a line about the run itself (not the transcript) to the error stream. It escapes
// nothing: the caller passes model- or server-derived text through Escape.
func (c *Client) Info(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLine()
	fmt.Fprintf(c.errw, "agentd: "+format+"\n", args...)
}

func (c *Client) style(code, s string) string {
	if !c.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (c *Client) emitJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	b = append(b, '\n')
	_, _ = c.w.Write(b)
}

// endLine ends streamed text before a block line; c.mu must be held.
func (c *Client) endLine() {
	if c.inText || c.inThink {
		fmt.Fprintln(c.w)
		c.inText, c.inThink = false, false
	}
}

// Update prints one session update.
func (c *Client) Update(sessionID string, u protocol.SessionUpdate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	if u.SessionUpdate == protocol.UpdateUsageUpdate && u.Cost != nil {
		cost := *u.Cost
		c.cost = &cost
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
		fmt.Fprint(c.w, safeText(u.Content.Text))
	case protocol.UpdateAgentThoughtChunk:
		if u.Content == nil {
			return
		}
		if !c.inThink {
			c.endLine()
			fmt.Fprint(c.w, c.style("2;3", "thinking: "))
			c.inThink = true
		}
		fmt.Fprint(c.w, c.style("2;3", safeText(u.Content.Text)))
	case protocol.UpdateUserMessageChunk:
		if u.Content != nil {
			c.endLine()
			fmt.Fprintf(c.w, "%s %s\n", c.style("1", "you:"), safeText(u.Content.Text))
		}
	case protocol.UpdateToolCall:
		c.endLine()
		c.calls[u.ToolCallID] = &call{title: u.Title}
	case protocol.UpdateToolCallUpdate:
		c.toolCallUpdate(u)
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
			fmt.Fprintf(c.w, "  %s %s\n", mark, safeLine(e.Content))
		}
	case protocol.UpdateNotice:
		c.endLine()
		line := fmt.Sprintf("[%s] %s", safeLine(u.Severity), safeLine(u.NoticeTitle))
		if u.Description != "" {
			line += ": " + safeText(u.Description)
		}
		fmt.Fprintln(c.errw, c.style("33", line))
		if u.Severity == protocol.SeverityError {
			c.errorShown += line + "\n"
		}
	case protocol.UpdateCurrentModeUpdate:
		c.endLine()
		fmt.Fprintf(c.errw, "agentd: mode is now %s\n", safeLine(u.CurrentModeID))
	case protocol.UpdateCompactionUpdate:
		if u.Status == "completed" {
			c.endLine()
			fmt.Fprintln(c.errw, "agentd: older turns were summarized to save context")
		}
	}
}

// toolCallUpdate prints a call's start and its end; c.mu must be held.
func (c *Client) toolCallUpdate(u protocol.SessionUpdate) {
	tc := c.calls[u.ToolCallID]
	if tc == nil {
		tc = &call{}
		c.calls[u.ToolCallID] = tc
	}
	if u.Title != "" {
		tc.title = u.Title
	}
	title := safeLine(tc.title)
	switch u.Status {
	case protocol.StatusInProgress:
		c.endLine()
		fmt.Fprintf(c.w, "%s %s\n", c.style("36", "▸"), title)
	case protocol.StatusCompleted, protocol.StatusFailed:
		c.endLine()
		if run, ok := programRun(u.RawOutput); ok {
			c.printRun(title, u.Status, run)
			return
		}
		if u.Status == protocol.StatusCompleted {
			fmt.Fprintf(c.w, "  %s %s\n", c.style("32", "✓"), title)
			for _, tcc := range u.ToolContent {
				if tcc.Type == "diff" && !tc.diffShown {
					c.printDiff(c.w, tcc)
				}
			}
			return
		}
		reason := ""
		for _, tcc := range u.ToolContent {
			if tcc.Type == "content" && tcc.Content != nil {
				reason = firstLine(tcc.Content.Text)
			}
		}
		fmt.Fprintf(c.w, "  %s %s: %s\n", c.style("31", "✗"), title, safeLine(reason))
	}
}

// run is what an exec tool (run_program and the tools built on it) reports in rawOutput.
type run struct {
	ExitCode  *int   `json:"exitCode"`
	TimedOut  bool   `json:"timedOut"`
	Cancelled bool   `json:"cancelled"`
	Output    string `json:"output"`
	Error     string `json:"error"` // the program could not start
}

func programRun(raw json.RawMessage) (run, bool) {
	var r run
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil || r.ExitCode == nil {
		return run{}, false
	}
	return r, true
}

// runTailLines is how many of a finished program's last output lines are shown.
const runTailLines = 8

// printRun shows how a program ended and the last lines of its output; c.mu must be held.
func (c *Client) printRun(title, status string, r run) {
	mark, how := c.style("32", "✓"), fmt.Sprintf("exit code %d", *r.ExitCode)
	switch {
	case r.Error != "":
		how = "could not start: " + safeLine(firstLine(r.Error))
	case r.TimedOut:
		how = "timed out, killed"
	case r.Cancelled:
		how = "cancelled, killed"
	}
	if status == protocol.StatusFailed || *r.ExitCode != 0 || r.Error != "" {
		mark = c.style("31", "✗")
	}
	fmt.Fprintf(c.w, "  %s %s %s\n", mark, title, c.style("2", "("+how+")"))
	out := strings.Split(strings.TrimRight(r.Output, "\n"), "\n")
	if len(out) == 1 && strings.TrimSpace(out[0]) == "" {
		return
	}
	if len(out) > runTailLines {
		fmt.Fprintf(c.w, "    %s\n", c.style("2", fmt.Sprintf("… %d earlier lines", len(out)-runTailLines)))
		out = out[len(out)-runTailLines:]
	}
	for _, l := range out {
		fmt.Fprintf(c.w, "    %s\n", c.style("2", safeText(clip.String(strings.TrimSuffix(l, "\r"), 300, "…"))))
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip.String(s, 200, "…")
}

// printDiff prints a file change as a unified diff to w; c.mu must be held.
func (c *Client) printDiff(w io.Writer, d protocol.ToolCallContent) {
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
	for i, l := range unifiedDiff(name, oldText, newText, d.OldText == nil, d.NewText == nil) {
		l = safeText(l)
		switch {
		case i < 2: // the --- and +++ lines
			fmt.Fprintln(w, "    "+c.style("1", l))
		case strings.HasPrefix(l, "+"):
			fmt.Fprintln(w, "    "+c.style("32", l))
		case strings.HasPrefix(l, "-"):
			fmt.Fprintln(w, "    "+c.style("31", l))
		case strings.HasPrefix(l, "@@"):
			fmt.Fprintln(w, "    "+c.style("36", l))
		default:
			fmt.Fprintln(w, "    "+l)
		}
	}
}

// CanAskPermission reports whether someone answers on the terminal.
func (c *Client) CanAskPermission() bool { return c.ask }

// RequestPermission shows the change (or the command) and reads the answer from the terminal:
// a number from the list. Anything else, Enter alone included, asks again; end of input or ctx
// ending cancels. In JSON mode the request is written to stdout as an event and the question
// goes to the error stream.
func (c *Client) RequestPermission(ctx context.Context, p protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
	cancelled := protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "cancelled"}}
	if len(p.Options) == 0 {
		return cancelled, nil
	}
	c.mu.Lock()
	c.endLine()
	w := c.w
	if c.json {
		c.emitJSON(map[string]any{"permissionRequest": p})
		w = c.errw
	}
	fmt.Fprintf(w, "\n%s %s\n", c.style("1;33", "Permission needed:"), safeLine(p.ToolCall.Title))
	if tc := c.calls[p.ToolCall.ToolCallID]; tc != nil && !c.json {
		tc.diffShown = true
	}
	for _, tcc := range p.ToolCall.ToolContent {
		if tcc.Type == "diff" {
			c.printDiff(w, tcc)
		}
	}
	if len(p.ToolCall.RawInput) > 0 {
		var cmd struct {
			Command []string          `json:"command"`
			Cwd     string            `json:"cwd"`
			Env     map[string]string `json:"env"`
			Stdin   string            `json:"stdin"`
		}
		if json.Unmarshal(p.ToolCall.RawInput, &cmd) == nil && len(cmd.Command) > 0 {
			fmt.Fprintf(w, "    $ %s\n    (in %s)\n", quoteArgv(cmd.Command), safeLine(cmd.Cwd))
			printEnvStdin(w, cmd.Env, cmd.Stdin)
		}
	}
	for i, o := range p.Options {
		fmt.Fprintf(w, "  %d) %s\n", i+1, safeLine(o.Name))
	}
	question := fmt.Sprintf("Choose 1-%d: ", len(p.Options))
	fmt.Fprint(w, question)
	c.mu.Unlock()

	for {
		var l line
		select {
		case <-ctx.Done():
			fmt.Fprintln(w)
			return cancelled, ctx.Err()
		case l = <-c.readLine():
			c.mu.Lock()
			c.pending = nil
			c.mu.Unlock()
		}
		s := strings.TrimSpace(l.s)
		if l.err != nil && s == "" {
			fmt.Fprintln(w)
			return cancelled, nil
		}
		if n, ok := option(s, len(p.Options)); ok {
			res := protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "selected", OptionID: p.Options[n-1].OptionID}}
			if c.json {
				c.mu.Lock()
				c.emitJSON(map[string]any{"permissionAnswer": res})
				c.mu.Unlock()
			}
			return res, nil
		}
		if s == "" {
			fmt.Fprintf(w, "Type the number of an option (Enter alone chooses nothing). %s", question)
		} else {
			fmt.Fprintf(w, "%q is not an option. %s", safeLine(clip.String(s, 40, "…")), question)
		}
		if l.err != nil {
			fmt.Fprintln(w)
			return cancelled, nil
		}
	}
}

// option parses an answer: a number from 1 to n and nothing else.
func option(s string, n int) (int, bool) {
	if s == "" || len(s) > 3 {
		return 0, false
	}
	k := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		k = k*10 + int(r-'0')
	}
	return k, k >= 1 && k <= n
}

// readLine returns a channel that delivers the next line of input; the receiver clears
// c.pending. A question given up while its read was in flight (the turn was cancelled) leaves
// that read pending, and the next question takes its line: one read at a time, so no line is
// lost to an abandoned reader, and none runs once a question is answered.
func (c *Client) readLine() <-chan line {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending != nil {
		return c.pending
	}
	ch := make(chan line, 1)
	if c.eof {
		ch <- line{err: io.EOF}
		return ch
	}
	c.pending = ch
	go func() {
		s, err := c.in.ReadString('\n')
		if err != nil {
			c.mu.Lock()
			c.eof = true
			c.mu.Unlock()
		}
		ch <- line{s, err}
	}()
	return ch
}

// Result prints how the turn ended.
func (c *Client) Result(res protocol.PromptResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	if c.json {
		out := map[string]any{"result": res}
		if c.cost != nil {
			out["cost"] = c.cost
		}
		c.emitJSON(out)
		return
	}
	c.endLine()
	if em, ok := res.Meta["agentd/error"].(protocol.ErrorMeta); ok {
		// The session also sends the error as a notice: say it once, and add only its kind.
		if msg := safeText(em.Message); msg != "" && strings.Contains(c.errorShown, msg) {
			fmt.Fprintf(c.errw, "agentd: the turn ended on the %s error above\n", safeLine(em.Kind))
		} else {
			fmt.Fprintf(c.errw, "agentd: the model request failed (%s): %s\n", safeLine(em.Kind), msg)
		}
	}
	if res.StopReason != protocol.StopEndTurn {
		fmt.Fprintf(c.errw, "agentd: turn ended: %s\n", safeLine(res.StopReason))
	}
	if res.Usage != nil {
		fmt.Fprintf(c.errw, "agentd: tokens: %d in, %d out\n", res.Usage.InputTokens, res.Usage.OutputTokens)
	}
	if c.cost != nil {
		fmt.Fprintf(c.errw, "agentd: cost: %s\n", FormatCost(*c.cost))
	}
}

// FormatCost is a cost as a person reads it: the amount to a millionth, without trailing
// zeros, then the currency ("0.0123 USD").
func FormatCost(c protocol.Cost) string {
	a := math.Round(c.Amount*1e6) / 1e6
	return strconv.FormatFloat(a, 'f', -1, 64) + " " + safeLine(c.Currency)
}

// shownStdin is how much of a program's input the question prints.
const shownStdin = 16 << 10

// printEnvStdin shows the variables a program gets and the input written to it: either can make
// the same command do something else (LD_PRELOAD, GIT_CONFIG_*, `python3 -`), and the grant
// covers only these.
func printEnvStdin(w io.Writer, env map[string]string, stdin string) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		fmt.Fprintf(w, "    env %s=%s\n", quoteWord(k), quoteWord(env[k]))
	}
	if stdin == "" {
		return
	}
	fmt.Fprintf(w, "    stdin (%d bytes):\n", len(stdin))
	shown := stdin
	if len(shown) > shownStdin {
		shown = strings.ToValidUTF8(shown[:shownStdin], "")
	}
	for _, l := range strings.SplitAfter(shown, "\n") {
		if l != "" {
			fmt.Fprintf(w, "      %s", safeText(strings.TrimSuffix(l, "\n")))
			fmt.Fprintln(w)
		}
	}
	if len(shown) < len(stdin) {
		fmt.Fprintf(w, "      … %d more bytes not shown\n", len(stdin)-len(shown))
	}
}
