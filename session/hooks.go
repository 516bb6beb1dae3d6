package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
)

// Hooks are the user's programs run at points of a turn (settings hooks, docs/protocol.md
// "Hooks"). Each gets the event as JSON on stdin. Exit 0 goes on, and its stdout may be a JSON
// object {decision: "block", reason} or {additionalContext}, or plain text, which is context
// too; exit 2 blocks, with stderr as the reason the model reads; any other exit, a program
// that cannot start, garbage on stdout or a run past its timeout (killed, as exit 1) is a
// notice, and the turn goes on. Hooks come from the user's settings only: config/table.go
// makes them user-only, so a project file's hooks are ignored unless the project is trusted.

const (
	defaultHookTimeout = 60 * time.Second
	// maxHookOutput bounds what is read of a hook's stdout and stderr, and what the model reads.
	maxHookOutput = 16 << 10
)

// hookInput is what a hook reads on stdin.
type hookInput struct {
	Event     string          `json:"event"`
	SessionID string          `json:"sessionId"`
	Cwd       string          `json:"cwd"`
	Tool      string          `json:"tool,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Output    *string         `json:"output,omitempty"`
	Prompt    *string         `json:"prompt,omitempty"`
}

// hookOutcome is what the hooks of one event decided: block (with the reasons the model
// reads), and context to add to what the model reads.
type hookOutcome struct {
	block   bool
	reason  string
	context string
}

// hookReply is a hook's JSON stdout.
type hookReply struct {
	Decision          string `json:"decision"`
	Reason            string `json:"reason"`
	AdditionalContext string `json:"additionalContext"`
}

// runHooks runs the hooks of in.Event whose match fits in.Tool, in order, and stops at the first
// that blocks.
func (s *Session) runHooks(ctx context.Context, set config.Settings, hooks []config.Hook, in hookInput) hookOutcome {
	var out hookOutcome
	if len(hooks) == 0 {
		return out
	}
	in.SessionID, in.Cwd = s.id, s.roots.Cwd()
	stdin, err := json.Marshal(in)
	if err != nil {
		return out
	}
	var contexts []string
	for i, h := range hooks {
		if h.Match != "" {
			re, err := regexp.Compile(h.Match)
			if err != nil || !re.MatchString(in.Tool) {
				continue
			}
		}
		r := s.runHook(ctx, set, h, stdin)
		name := fmt.Sprintf("hooks.%s[%d] (%s)", in.Event, i, strings.Join(h.Command, " "))
		if r.problem != "" {
			s.notice(protocol.SeverityWarning, "Hook failed", name+": "+r.problem+". The turn goes on.")
			continue
		}
		if r.context != "" {
			contexts = append(contexts, r.context)
		}
		if r.block {
			out.block, out.reason = true, r.reason
			if out.reason == "" {
				out.reason = "(the hook gave no reason)"
			}
			break
		}
	}
	out.context = strings.Join(contexts, "\n")
	return out
}

type hookResult struct {
	block           bool
	reason, context string
	problem         string
}

func hookTimeout(h config.Hook) time.Duration {
	if h.TimeoutMs > 0 {
		return time.Duration(h.TimeoutMs) * time.Millisecond
	}
	return defaultHookTimeout
}

// runHook runs one hook to its end or its timeout.
func (s *Session) runHook(ctx context.Context, set config.Settings, h config.Hook, stdin []byte) hookResult {
	timeout := hookTimeout(h)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Command[0], h.Command[1:]...)
	cmd.Dir = s.roots.Cwd()
	cmd.Env = withoutEnv(os.Environ(), s.m.d.KeyEnvNames(set))
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A timeout kills the hook's whole process group; children that escaped it and keep its
	// pipes open do not hold the turn past the kill.
	cleanup := tools.InOwnGroup(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	cleanup()
	if ctx.Err() == context.DeadlineExceeded {
		return hookResult{problem: fmt.Sprintf("it ran past its timeout of %v and was killed", timeout)}
	}
	if ctx.Err() != nil {
		return hookResult{problem: "cancelled"}
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		return hookResult{block: true, reason: strings.TrimSpace(stderr.String())}
	case errors.As(err, &exit):
		return hookResult{problem: fmt.Sprintf("exit status %d: %s", exit.ExitCode(), clip.String(strings.TrimSpace(stderr.String()), 500, "…"))}
	default:
		return hookResult{problem: err.Error()}
	}
	text := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(text, "{") {
		return hookResult{context: text}
	}
	var rep hookReply
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil || (rep.Decision != "" && rep.Decision != "block") {
		return hookResult{problem: "its output is not the JSON a hook answers ({decision: \"block\", reason} or {additionalContext}): " + clip.String(text, 200, "…")}
	}
	return hookResult{block: rep.Decision == "block", reason: strings.TrimSpace(rep.Reason), context: strings.TrimSpace(rep.AdditionalContext)}
}

// capped keeps the first maxHookOutput bytes written to it and drops the rest.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxHookOutput - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// withoutEnv drops the named variables (the provider keys) from an environment: a hook's output
// reaches the model like a program's.
func withoutEnv(environ, hide []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, h := range hide {
			drop = drop || strings.EqualFold(h, k)
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// runToolWithHooks runs a call between its beforeTool and afterTool hooks: a beforeTool hook
// that blocks keeps the tool from running and the model reads why; what an afterTool hook adds
// follows the tool's output.
func (t *turn) runToolWithHooks(c *call, env *tools.Env) tools.Result {
	hooks := t.set.Hooks
	if len(hooks.BeforeTool) > 0 {
		o := t.s.runHooks(t.ctx, t.set, hooks.BeforeTool, hookInput{Event: "beforeTool", Tool: c.name, Input: validJSON(c.final)})
		if o.block {
			return tools.Result{Output: t.s.m.text("hooks.blocked", prompts.Run{"REASON": clip.String(o.reason, maxHookOutput, "…")}), IsError: true}
		}
	}
	res := t.safeRun(c, env)
	if len(hooks.AfterTool) > 0 && t.ctx.Err() == nil {
		out := res.Output
		o := t.s.runHooks(t.ctx, t.set, hooks.AfterTool, hookInput{Event: "afterTool", Tool: c.name, Input: validJSON(c.final), Output: &out})
		var add []string
		if o.context != "" {
			add = append(add, t.s.m.text("hooks.added", prompts.Run{"REASON": clip.String(o.context, maxHookOutput, "…")}))
		}
		if o.block {
			add = append(add, t.s.m.text("hooks.objection", prompts.Run{"REASON": clip.String(o.reason, maxHookOutput, "…")}))
		}
		if len(add) > 0 {
			res.Output = strings.TrimRight(res.Output, "\n") + "\n\n" + strings.Join(add, "\n\n")
		}
	}
	return res
}

// validJSON is raw when it is JSON (a call's final arguments), else nothing.
func validJSON(raw json.RawMessage) json.RawMessage {
	if json.Valid(raw) {
		return raw
	}
	return nil
}

// promptSubmitHooks runs the promptSubmit hooks on the prompt as the model would read it (the
// text blocks), with the session's sessionStart context the first time. It returns the blocks
// with the hooks' context after them, or blocked with the reason, which the user gets as a
// notice: the prompt then never reaches the model.
func (t *turn) promptSubmitHooks(blocks []protocol.ContentBlock) ([]protocol.ContentBlock, bool) {
	var contexts []string
	if c := t.s.takeStartContext(t.ctx); c != "" {
		contexts = append(contexts, c)
	}
	if hooks := t.set.Hooks.PromptSubmit; len(hooks) > 0 {
		var texts []string
		for _, b := range blocks {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
		prompt := strings.Join(texts, "\n")
		o := t.s.runHooks(t.ctx, t.set, hooks, hookInput{Event: "promptSubmit", Prompt: &prompt})
		if o.block {
			t.s.notice(protocol.SeverityWarning, "Prompt blocked by a hook", clip.String(o.reason, maxHookOutput, "…"))
			return blocks, true
		}
		if o.context != "" {
			contexts = append(contexts, o.context)
		}
	}
	if len(contexts) == 0 {
		return blocks, false
	}
	text := t.s.m.text("hooks.context", prompts.Run{"REASON": clip.String(strings.Join(contexts, "\n"), maxHookOutput, "…")})
	return append(slices.Clip(blocks), protocol.TextBlock(text)), false
}

// startSessionHooks runs the sessionStart hooks of a new session in the background, once the
// session/new answer is out (after closes; a notice before it would name a session the client
// does not know yet). What they add reaches the model with the session's first prompt, which
// waits for them (each is bounded by its timeout).
func (s *Session) startSessionHooks(after <-chan struct{}) {
	set := s.settings()
	if len(set.Hooks.SessionStart) == 0 {
		return
	}
	done := make(chan string, 1)
	wait := 5 * time.Second // the answer going out, and the programs starting
	for _, h := range set.Hooks.SessionStart {
		wait += hookTimeout(h)
	}
	s.mu.Lock()
	s.startHooks, s.startWait = done, wait
	s.mu.Unlock()
	go func() {
		<-after
		done <- s.runHooks(context.Background(), set, set.Hooks.SessionStart, hookInput{Event: "sessionStart"}).context
	}()
}

// takeStartContext is the sessionStart hooks' context, once: it waits for them to finish unless
// ctx ends first.
func (s *Session) takeStartContext(ctx context.Context) string {
	s.mu.Lock()
	ch, wait := s.startHooks, s.startWait
	s.startHooks = nil
	s.mu.Unlock()
	if ch == nil {
		return ""
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case c := <-ch:
		return c
	case <-ctx.Done():
	case <-timer.C:
	}
	return ""
}

// stopHook runs the stop hooks when the turn is about to end, once per turn: a hook that
// blocks asks the model for one more step, with its reason as the message.
func (t *turn) stopHook() bool {
	hooks := t.set.Hooks.Stop
	if len(hooks) == 0 || t.stopHooked || t.ctx.Err() != nil {
		return false
	}
	t.stopHooked = true
	o := t.s.runHooks(t.ctx, t.set, hooks, hookInput{Event: "stop"})
	if !o.block {
		return false
	}
	t.addUserMessage([]protocol.ContentBlock{protocol.TextBlock(t.s.m.text("hooks.stop", prompts.Run{"REASON": clip.String(o.reason, maxHookOutput, "…")}))}, false)
	return true
}
