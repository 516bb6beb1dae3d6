// Package completion owns inline completions (LSP 3.18 textDocument/inlineCompletion): it turns
// the text around the cursor into a fill-in-the-middle request in the dialect the settings name
// (OpenAI-compatible /completions with a suffix, llama.cpp's /infill, Codestral's
// /fim/completions, or any chat model, prompted), and shapes the answer the way a typist needs
// it: cut at a sensible boundary, without the text that follows the cursor repeated, nothing
// when it is only whitespace.
//
// An Engine serves one editor. A newer request for a document cancels the older one (its HTTP
// request too); typing through a suggestion is answered from the previous result without a
// model call; a provider error is one log line and an empty result, never a notice per
// keystroke. The provider and its key are resolved once and reused while the settings stay the
// same (see Engine.Revision), not asked of the editor at every keystroke.
package completion

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
)

// Request is one completion: the document's text split at the cursor, and what else the model
// may see.
type Request struct {
	// Key identifies the document (its URI): a newer request with the same key cancels this one.
	Key      string
	Path     string
	Language string
	Prefix   string // the text before the cursor
	Suffix   string // the text after it
	// Others are other open files, most relevant first; they fill what is left of the budget.
	Others []File
	// LoadOthers, when set, reads Others: called only for a request that goes to the model in a
	// dialect that sends other files (infill, chat), so one answered from the previous suggestion,
	// or sent where only the prefix and suffix go, reads nothing more from the editor.
	LoadOthers func() []File
}

// File is another file the model may read for context.
type File struct {
	Path string
	Text string
}

// Resolve returns the configured provider id's provider and its resolved configuration (base
// URL and the key bound to its origin), as the agent's own requests get them.
type Resolve func(ctx context.Context, id string) (providers.Provider, providers.Config, error)

// Engine answers completion requests for one editor.
type Engine struct {
	// Settings returns the current completion settings.
	Settings func() config.Completion
	// Resolve finds the provider the settings name.
	Resolve Resolve
	// Revision, when set, changes whenever what Resolve reads may have (the settings, headers
	// set for a provider): the engine reuses a resolved provider while it stays the same (see
	// resolve). Now is the clock, time.Now when nil.
	Revision func() uint64
	Now      func() time.Time
	// Doer sends the HTTP requests of the FIM dialects; nil means providers' transport.
	Doer Doer
	Log  *zap.Logger

	mu       sync.Mutex
	inflight map[string]*flight // by Request.Key
	// superseded are requests Supersede cancelled, by key, until the next request for the
	// document has waited for them.
	superseded map[string]*flight
	last       map[string]result // the newest answer per document
	clock      uint64            // counts answers, to find the least recently used document
	stats      Stats
	resolved   *resolution // the provider resolved last, while Revision keeps it valid
}

// Stats counts what the engine did, for benchmarks and tests.
type Stats struct {
	Requests     int // completion requests answered
	ModelCalls   int // requests that went to the model
	TypedThrough int // answered from the previous suggestion
	Cancelled    int // superseded by a newer request for the same document
	Failed       int // the model call failed (logged once each, answered empty)
}

type flight struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when its model request has returned
}

// result is a suggestion as shown: the text around the cursor it was made for (as the editor
// sent it, before the budget cut it), and its text.
type result struct {
	prefix, suffix, text string
	used                 uint64 // the engine's clock when it was made or last typed through
}

// maxDocuments is how many documents' last suggestions the engine keeps. The editor says when
// a document closes (Forget); this bounds one that never does, keeping the newest.
const maxDocuments = 64

// Stats returns a copy of the counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// ErrNotConfigured means the settings name no completion provider and model.
var ErrNotConfigured = errors.New("inline completions are off: set completion.provider and completion.model")

// Complete returns the text to insert at the cursor, "" when there is nothing worth showing.
// Its error is for a request that could not be made at all (no settings); a model that fails
// is logged and answered "".
func (e *Engine) Complete(ctx context.Context, req Request) (string, error) {
	set := e.Settings()
	if !set.Enabled() {
		return "", ErrNotConfigured
	}
	e.mu.Lock()
	e.stats.Requests++
	if prev, ok := e.last[req.Key]; ok {
		if rest, ok := typedThrough(prev, req); ok {
			e.stats.TypedThrough++
			e.clock++
			prev.used = e.clock
			e.last[req.Key] = prev
			e.mu.Unlock()
			return rest, nil
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	old := e.inflight[req.Key]
	if old != nil {
		old.cancel()
		e.stats.Cancelled++
	}
	if old == nil {
		old = e.superseded[req.Key]
	}
	delete(e.superseded, req.Key)
	me := &flight{cancel: cancel, done: make(chan struct{})}
	if e.inflight == nil {
		e.inflight = map[string]*flight{}
	}
	e.inflight[req.Key] = me
	e.stats.ModelCalls++
	e.mu.Unlock()

	defer func() {
		close(me.done)
		e.mu.Lock()
		if e.inflight[req.Key] == me {
			delete(e.inflight, req.Key)
		}
		e.mu.Unlock()
	}()

	// One model request in flight per document: the cancelled one returns at once, so this
	// waits only for its connection to let go.
	if old != nil {
		select {
		case <-old.done:
		case <-ctx.Done():
			return "", nil
		}
	}
	// Typing through compares the editor's next text with this one, whole: the cut text the
	// model gets would never match it in a file larger than the budget.
	shown := result{prefix: req.Prefix, suffix: req.Suffix}
	raw, req, err := e.call(ctx, set, req)
	if err != nil {
		if ctx.Err() != nil {
			return "", nil // superseded or given up by the editor: not a failure
		}
		e.mu.Lock()
		e.stats.Failed++
		e.mu.Unlock()
		// A refused key or a server gone: the next keystroke looks again.
		e.dropResolved()
		e.log().Info("inline completion failed", zap.String("provider", set.Provider), zap.String("endpoint", endpointOf(set, providers.Config{})), zap.Error(err))
		return "", nil
	}
	text := Shape(raw, req.Prefix, req.Suffix)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inflight[req.Key] != me {
		// A newer request overtook this one while its answer was on its way: the editor no
		// longer has the text it was made for.
		return "", nil
	}
	if e.last == nil {
		e.last = map[string]result{}
	}
	if _, ok := e.last[req.Key]; !ok && len(e.last) >= maxDocuments {
		e.evictOldest()
	}
	e.clock++
	shown.text, shown.used = text, e.clock
	e.last[req.Key] = shown
	return text, nil
}

// evictOldest drops the least recently used document's suggestion. It walks the map (at most
// maxDocuments entries), only when a new document would exceed the bound.
func (e *Engine) evictOldest() {
	oldest, at := "", uint64(0)
	for k, r := range e.last {
		if oldest == "" || r.used < at {
			oldest, at = k, r.used
		}
	}
	delete(e.last, oldest)
}

// Forget drops what the engine holds for a document (it was closed).
func (e *Engine) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f := e.inflight[key]; f != nil {
		f.cancel()
		delete(e.inflight, key)
	}
	delete(e.superseded, key)
	delete(e.last, key)
}

// typedThrough answers a request whose prefix is the previous suggestion's prefix plus the
// start of the suggestion: the user typed what was suggested, so the rest still stands.
func typedThrough(prev result, req Request) (string, bool) {
	if prev.text == "" || req.Suffix != prev.suffix || !strings.HasPrefix(req.Prefix, prev.prefix) {
		return "", false
	}
	typed := req.Prefix[len(prev.prefix):]
	if typed == "" || !strings.HasPrefix(prev.text, typed) || len(typed) == len(prev.text) {
		return "", false
	}
	return prev.text[len(typed):], true
}

func (e *Engine) log() *zap.Logger {
	if e.Log == nil {
		return zap.NewNop()
	}
	return e.Log
}

// The context budget, in characters, when the settings give none: about 2,000 tokens.
const defaultBudget = 8000

func budget(set config.Completion) int {
	if set.ContextChars > 0 {
		return set.ContextChars
	}
	return defaultBudget
}

// fit cuts the request to budget characters: the prefix keeps its end and the suffix its start
// (three quarters of the budget before the cursor), whole lines where it can, and other files
// fill what is left, each whole or not at all.
func fit(req Request, n int) Request {
	before := n * 3 / 4
	if len(req.Prefix) < before {
		before = len(req.Prefix)
	}
	after := n - before
	if len(req.Suffix) < after {
		after = len(req.Suffix)
		before = min(len(req.Prefix), n-after)
	}
	if before < len(req.Prefix) {
		p := req.Prefix[len(req.Prefix)-before:]
		if i := strings.IndexByte(p, '\n'); i >= 0 && i < len(p)-1 {
			p = p[i+1:]
		}
		req.Prefix = validStart(p)
	}
	if after < len(req.Suffix) {
		s := req.Suffix[:after]
		if i := strings.LastIndexByte(s, '\n'); i > 0 {
			s = s[:i+1]
		}
		req.Suffix = validEnd(s)
	}
	left := n - len(req.Prefix) - len(req.Suffix)
	var others []File
	for _, f := range req.Others {
		if f.Path == req.Path || len(f.Text) > left {
			continue
		}
		others = append(others, f)
		left -= len(f.Text)
	}
	req.Others = others
	return req
}

// validStart drops the bytes of a UTF-8 character cut at the start of s.
func validStart(s string) string {
	for len(s) > 0 && s[0]&0xC0 == 0x80 {
		s = s[1:]
	}
	return s
}

// validEnd drops a UTF-8 character cut at the end of s.
func validEnd(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-4; i-- {
		c := s[i]
		if c < 0x80 {
			return s
		}
		if c&0xC0 == 0xC0 { // a lead byte: is its character whole?
			need := 2
			switch {
			case c >= 0xF0:
				need = 4
			case c >= 0xE0:
				need = 3
			}
			if len(s)-i < need {
				return s[:i]
			}
			return s
		}
	}
	return s
}

// Supersede says a newer request for the document key has arrived, before it has read the
// document: the request in flight for key is cancelled, and its answer, even one already on its
// way, is dropped.
func (e *Engine) Supersede(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f := e.inflight[key]; f != nil {
		f.cancel()
		delete(e.inflight, key)
		e.stats.Cancelled++
		// The request that superseded it waits for it to end before its own model request.
		if e.superseded == nil {
			e.superseded = map[string]*flight{}
		}
		e.superseded[key] = f
	}
}
