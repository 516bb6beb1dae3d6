// Package replay is the offline provider: it plays recorded model responses (text, thinking,
// tool calls, stop reason, usage) from a script file, one response per model call, streamed in
// small deltas like a real provider. It serves tests and the demo of `agentd exec --demo`, so a
// newcomer with no key watches a whole turn. apiType "replay"; baseUrl is the script's path (or a
// file:// URL).
//
// A script is a JSON object (or JSONL, one response per line):
//
//	{
//	  "title": "Fix the off-by-one in sum",      // answers tool-less requests (session titles)
//	  "summary": "…",                            // answers summary requests (compaction)
//	  "chunkDelayMs": 10,                        // pause between streamed deltas
//	  "responses": [
//	    {"thinking": "…", "text": "…",
//	     "toolCalls": [{"id": "c1", "name": "read_file", "args": {"path": "{{cwd}}/sum.go"}}],
//	     "stopReason": "tool_use", "usage": {"input": 1200, "output": 80}},
//	    {"text": "Fixed it.", "onToolError": {"text": "The edit was refused, so nothing changed."}},
//	    {"error": {"kind": "rate_limit", "message": "…"}}
//	  ]
//	}
//
// "onToolError" is played instead of its response when a tool result the request ends with
// reports a failure (a refused permission, a failed call), so a script can tell the truth about
// the outcome of the calls before it.
//
// internal/test/fakemodel, the OpenAI-compatible server the end-to-end tests and the clients' tests
// use, reads this same format (with a few HTTP-only additions), so one script drives both the
// in-process provider and the wire. "{{cwd}}" is this provider's alone.
//
// "{{cwd}}" in arguments is replaced by the session's working directory (read from the request's
// live context). Responses are taken in order by the provider, which the registry keeps for as
// long as its configuration holds, so a daemon walks the script once; past its end the provider
// answers with a short text saying so.
package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/providers"
)

// APIType is the apiType the replay provider is registered under.
const APIType = "replay"

// ExhaustedText is the answer once the script has no more responses.
const ExhaustedText = "(The replay script has no more responses.)"

// Script is a recorded conversation's model side.
type Script struct {
	Title        string     `json:"title,omitempty"`
	Summary      string     `json:"summary,omitempty"`
	ChunkDelayMs int        `json:"chunkDelayMs,omitempty"`
	Responses    []Response `json:"responses"`
}

// Response is one model call's answer.
type Response struct {
	Thinking   string               `json:"thinking,omitempty"`
	Text       string               `json:"text,omitempty"`
	ToolCalls  []ToolCall           `json:"toolCalls,omitempty"`
	StopReason providers.StopReason `json:"stopReason,omitempty"`
	Usage      *providers.Usage     `json:"usage,omitempty"`
	Notice     string               `json:"notice,omitempty"`
	Error      *ScriptError         `json:"error,omitempty"`
	// ChunkDelayMs overrides the script's delay for this response.
	ChunkDelayMs *int `json:"chunkDelayMs,omitempty"`
	// OnToolError replaces this response when a tool result in the request's last message is
	// an error (a refusal included).
	OnToolError *Response `json:"onToolError,omitempty"`
}

// ToolCall is one recorded call. Args is any JSON value; strings in it may hold {{cwd}}.
type ToolCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// ScriptError makes a response fail like a provider error.
type ScriptError struct {
	Kind    providers.ErrorKind `json:"kind"`
	Message string              `json:"message"`
}

// Provider plays a script.
type Provider struct {
	script *Script
	cur    *cursor
}

type cursor struct {
	mu   sync.Mutex
	next int
	call int
}

// Dialect is everything the registry knows of this dialect: a local file, no network, no key.
var Dialect = providers.Dialect{APIType: APIType, New: New}

// New builds a replay provider from cfg.BaseURL, the script's path.
func New(cfg providers.Config) (providers.Provider, error) {
	path := cfg.BaseURL
	if strings.HasPrefix(path, "file://") {
		u, err := url.Parse(path)
		if err != nil {
			return nil, fmt.Errorf("replay: baseUrl %q: %w", cfg.BaseURL, err)
		}
		path = u.Path
	}
	if path == "" {
		return nil, errors.New("replay: baseUrl must name a script file")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	s, err := Load(abs)
	if err != nil {
		return nil, err
	}
	return &Provider{script: s, cur: &cursor{}}, nil
}

// NewFromScript builds a provider with its own cursor, for tests.
func NewFromScript(s *Script) *Provider { return &Provider{script: s, cur: &cursor{}} }

// Load reads a JSON or JSONL script.
func Load(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	var s Script
	trimmed := bytes.TrimSpace(b)
	if err := json.Unmarshal(trimmed, &s); err == nil && s.Responses != nil {
		return &s, nil
	}
	// JSONL: one response per line; a line with "responses" absent but "title" present sets it.
	sc := bufio.NewScanner(bytes.NewReader(trimmed))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var r struct {
			Response
			Title   string `json:"title"`
			Summary string `json:"summary"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("replay: %s:%d: %w", path, n, err)
		}
		if r.Title != "" || r.Summary != "" {
			s.Title, s.Summary = cmp(r.Title, s.Title), cmp(r.Summary, s.Summary)
			if r.Text == "" && len(r.ToolCalls) == 0 && r.Error == nil {
				continue
			}
		}
		s.Responses = append(s.Responses, r.Response)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	if len(s.Responses) == 0 {
		return nil, fmt.Errorf("replay: %s holds no responses", path)
	}
	return &s, nil
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Stream plays the next response of the script. Requests without tools (a session title, a
// compaction summary) are answered from the script's title and summary without using a response.
func (p *Provider) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		em := providers.NewEmitter(yield)
		defer em.Finish(&providers.Error{Kind: providers.ErrCancelled, Message: "The request was cancelled."})
		if len(req.Tools) == 0 {
			p.aside(ctx, em, req)
			return
		}
		p.cur.mu.Lock()
		var r Response
		exhausted := p.cur.next >= len(p.script.Responses)
		if !exhausted {
			r = p.script.Responses[p.cur.next]
			p.cur.next++
		}
		p.cur.call++
		call := p.cur.call
		p.cur.mu.Unlock()
		if exhausted {
			r = Response{Text: ExhaustedText}
		}
		if r.OnToolError != nil && lastResultFailed(req) {
			r = *r.OnToolError
		}
		delay := time.Duration(p.script.ChunkDelayMs) * time.Millisecond
		if r.ChunkDelayMs != nil {
			delay = time.Duration(*r.ChunkDelayMs) * time.Millisecond
		}
		pl := &player{ctx: ctx, em: em, delay: delay}
		p.play(pl, r, req, call)
	}
}

type player struct {
	ctx   context.Context
	em    *providers.Emitter
	delay time.Duration
	first bool
}

// emit yields ev after the chunk delay; false when the consumer left or ctx ended.
func (pl *player) emit(ev providers.Event) bool {
	if pl.first && pl.delay > 0 {
		t := time.NewTimer(pl.delay)
		select {
		case <-t.C:
		case <-pl.ctx.Done():
			t.Stop()
			return false
		}
	}
	pl.first = true
	if pl.ctx.Err() != nil {
		return false
	}
	return pl.em.Emit(ev)
}

func (p *Provider) play(pl *player, r Response, req *providers.Request, call int) {
	if r.Notice != "" && !pl.emit(providers.Event{Type: providers.EventNotice, Text: r.Notice}) {
		return
	}
	for _, chunk := range chunks(r.Thinking) {
		if !pl.emit(providers.Event{Type: providers.EventThinkingDelta, Text: chunk}) {
			return
		}
	}
	if r.Thinking != "" && !pl.emit(providers.Event{Type: providers.EventThinkingDelta, Signature: fmt.Sprintf("replay-signature-%d", call)}) {
		return
	}
	for _, chunk := range chunks(r.Text) {
		if !pl.emit(providers.Event{Type: providers.EventTextDelta, Text: chunk}) {
			return
		}
	}
	if r.Error != nil {
		pl.em.Fail(&providers.Error{Kind: r.Error.Kind, Message: r.Error.Message})
		return
	}
	cwd := cwdOf(liveText(req))
	for i, tc := range r.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("replay_%d_%d", call, i)
		} else {
			id = fmt.Sprintf("%s_%d", id, call) // unique across turns, as providers' ids are
		}
		args := expand(tc.Args, cwd)
		if !pl.emit(providers.Event{Type: providers.EventToolCallStarted, Index: i, ToolCallID: id, ToolName: tc.Name}) {
			return
		}
		for _, chunk := range chunks(string(args)) {
			if !pl.emit(providers.Event{Type: providers.EventToolCallArgsDelta, Index: i, ToolCallID: id, Text: chunk}) {
				return
			}
		}
		if !pl.emit(providers.Event{Type: providers.EventToolCallCompleted, Index: i, ToolCallID: id, ToolName: tc.Name, Args: args}) {
			return
		}
	}
	u := estimateUsage(req, r)
	if r.Usage != nil {
		u = *r.Usage
	}
	if !pl.emit(providers.Event{Type: providers.EventUsage, Usage: u}) {
		return
	}
	stop := r.StopReason
	if stop == "" {
		stop = providers.StopEndTurn
		if len(r.ToolCalls) > 0 {
			stop = providers.StopToolUse
		}
	}
	pl.em.Complete(stop)
}

// lastResultFailed reports whether a tool result of the request's last message is an error.
func lastResultFailed(req *providers.Request) bool {
	if len(req.Messages) == 0 {
		return false
	}
	for _, p := range req.Messages[len(req.Messages)-1].Parts {
		if p.Type == providers.PartToolResult && p.IsError {
			return true
		}
	}
	return false
}

// aside answers a tool-less request: a title or a summary.
func (p *Provider) aside(ctx context.Context, em *providers.Emitter, req *providers.Request) {
	text := p.script.Summary
	if strings.Contains(strings.ToLower(req.System), "title") || text == "" {
		text = p.script.Title
	}
	if text == "" {
		text = firstUserLine(req)
	}
	if ctx.Err() != nil {
		return
	}
	if em.Emit(providers.Event{Type: providers.EventTextDelta, Text: text}) {
		em.Emit(providers.Event{Type: providers.EventUsage, Usage: providers.Usage{Input: 50, Output: len(text)/4 + 1}})
		em.Complete(providers.StopEndTurn)
	}
}

func firstUserLine(req *providers.Request) string {
	for _, m := range req.Messages {
		if m.Role != providers.RoleUser {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == providers.PartText && strings.TrimSpace(p.Text) != "" {
				line := strings.TrimSpace(strings.SplitN(strings.TrimSpace(p.Text), "\n", 2)[0])
				return clip.String(line, 60, "")
			}
		}
	}
	return "Replayed session"
}

// chunks splits s into small deltas on word boundaries, as models stream.
func chunks(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(len(s), 12)
		if i := strings.IndexAny(s[1:n], " \n"); i >= 0 && n == 12 {
			n = i + 2
		}
		for n < len(s) && !utf8Start(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

const cwdPrefix = "Working directory: "

// cwdOf finds the session's working directory in the request's live context.
// liveText is the request's live context: Context, else the newest reminder session put in the
// messages (the text after the last "Working directory: " line wins).
func liveText(req *providers.Request) string {
	if req.Context != "" {
		return req.Context
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		for j := len(req.Messages[i].Parts) - 1; j >= 0; j-- {
			if t := req.Messages[i].Parts[j].Text; strings.Contains(t, cwdPrefix) {
				return t
			}
		}
	}
	return ""
}

func cwdOf(live string) string {
	for line := range strings.SplitSeq(live, "\n") {
		if rest, ok := strings.CutPrefix(line, cwdPrefix); ok {
			return strings.TrimSpace(rest)
		}
	}
	return "."
}

// expand replaces {{cwd}} in every string of args.
func expand(args json.RawMessage, cwd string) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	if !bytes.Contains(args, []byte("{{cwd}}")) {
		return args
	}
	enc, _ := json.Marshal(cwd)
	inner := string(enc[1 : len(enc)-1])
	return json.RawMessage(strings.ReplaceAll(string(args), "{{cwd}}", inner))
}

func estimateUsage(req *providers.Request, r Response) providers.Usage {
	in := len(req.System) + len(req.Context)
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			in += len(p.Text) + len(p.Args)
		}
	}
	for _, t := range req.Tools {
		in += len(t.Description) + len(t.Schema)
	}
	out := len(r.Text) + len(r.Thinking)
	for _, tc := range r.ToolCalls {
		out += len(tc.Args) + len(tc.Name)
	}
	return providers.Usage{Input: in/4 + 1, Output: out/4 + 1}
}
