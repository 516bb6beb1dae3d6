package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/prompts"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

const (
	// keepToolResults is how many of the most recent tool results are always sent whole.
	keepToolResults = 3
	// elideBlock is how many results the elision boundary moves at once. Moving it by one at
	// every step would change an early message in every request and break the provider's
	// prompt cache prefix at every step; moving it in blocks keeps the prefix byte-stable for
	// elideBlock-1 steps out of elideBlock. With keep 3 and block 3, between 3 and 5 recent
	// results (4 on average, as many as the former fixed keep of 4) are sent whole.
	elideBlock = 3
	// elideHead is how much of an older tool result is kept.
	elideHead = 400
	// elideMinSaving is the fewest bytes a move of the boundary must take off every later
	// request. A move rewrites older messages, so the providers' prompt caches serve the next
	// request only up to the first of them, and everything after it is paid for again (at the
	// full price, or Anthropic's cache-write price); moving past a few short results (an edit's
	// confirmation, a small search) saves less than that costs. So the boundary moves, at block
	// points, only once the results it passes would shrink by this much together: 16 KB, about
	// 4,000 tokens. Results of 6 KB move it every block, as before.
	elideMinSaving = 16 << 10
)

// elideToolResults returns the history to send: tool results older than the most recent keep
// are cut to a head excerpt and a marker asking the model to call the tool again. User and
// assistant text are untouched, and so is the stored history (changed messages are copies).
//
// The boundary moves in steps of block results, counted from the start of the history, and only
// when the results it passes would shrink by minSaving bytes together (elideBoundary): between
// moves, the messages before the newest ones stay byte-identical from one request to the next.
// With minSaving 0 the first block·⌊(n−keep)/block⌋ of the n results are elided; block 1
// elides all but the last keep.
func elideToolResults(hist []providers.Message, keep, head, block, minSaving int) []providers.Message {
	var saves []int
	for _, m := range hist {
		saves = resultSavings(saves, m, head)
	}
	elide, _, _ := elideBoundary(saves, 0, 0, 0, keep, block, minSaving)
	var out []providers.Message
	k := 0 // the index of hist[i]'s first result among all of them
	for i, m := range hist {
		n := resultsIn(m)
		if n > 0 && k < elide {
			if em, changed := elideMessage(m, k, elide, head); changed {
				if out == nil {
					out = append([]providers.Message(nil), hist...)
				}
				out[i] = em
			}
		}
		k += n
	}
	if out == nil {
		return hist
	}
	return out
}

// elideBoundary is how many of the results whose savings are saves, counted from the oldest,
// are elided: it moves from one block point to a later one when the results between them save
// at least minSaving, and never past the newest keep. It goes on from a scan of the first
// scanned results that left the boundary at bound with acc bytes saved since (0, 0, 0: from the
// start) and returns the same three for the next call: the boundary depends only on the results
// before it, so a history that grows continues the scan.
func elideBoundary(saves []int, scanned, bound, acc, keep, block, minSaving int) (int, int, int) {
	block = max(block, 1)
	for ; scanned < len(saves)-keep; scanned++ {
		acc += saves[scanned]
		if (scanned+1)%block == 0 && acc >= minSaving {
			bound, acc = scanned+1, 0
		}
	}
	return bound, scanned, acc
}

// resultSavings appends to saves what eliding each of m's tool results would take off a request:
// the text beyond the head of a long one, and the images that go with it.
func resultSavings(saves []int, m providers.Message, head int) []int {
	for _, p := range m.Parts {
		if p.Type != providers.PartToolResult {
			continue
		}
		n := 0
		if len(p.Text) > head+200 {
			n = len(p.Text) - head
		}
		for _, q := range m.Parts {
			if q.Type == providers.PartImage && q.ToolCallID != "" && q.ToolCallID == p.ToolCallID {
				n += len(q.Data)
			}
		}
		saves = append(saves, n)
	}
	return saves
}

func resultsIn(m providers.Message) int {
	n := 0
	for _, p := range m.Parts {
		if p.Type == providers.PartToolResult {
			n++
		}
	}
	return n
}

// elideMessage is m as sent when its results are numbered from first on and those before elide
// are older: their long texts cut, and images that belong to them (by call id) replaced by a
// note. It returns m itself, and false, when nothing in it changes.
func elideMessage(m providers.Message, first, elide, head int) (providers.Message, bool) {
	var parts []providers.Part
	var older []string // the calls of this message's older results, when it has an image
	hasImage := false
	for _, p := range m.Parts {
		if p.Type == providers.PartImage && p.ToolCallID != "" {
			hasImage = true
			break
		}
	}
	k := first
	for j, p := range m.Parts {
		if p.Type != providers.PartToolResult {
			continue
		}
		k++
		if k-1 >= elide {
			continue
		}
		if hasImage {
			older = append(older, p.ToolCallID)
		}
		if len(p.Text) <= head+200 {
			continue
		}
		if parts == nil {
			parts = append([]providers.Part(nil), m.Parts...)
		}
		parts[j].Text = elideText(p.Text, p.ToolName, head)
	}
	// An older result's images go the same way, whatever its text's length.
	for j, p := range m.Parts {
		if len(older) == 0 {
			break
		}
		if p.Type != providers.PartImage || p.ToolCallID == "" || !slices.Contains(older, p.ToolCallID) {
			continue
		}
		if parts == nil {
			parts = append([]providers.Part(nil), m.Parts...)
		}
		parts[j] = providers.Part{Type: providers.PartText, Text: fmt.Sprintf("[an image of an older tool result (%s, %d bytes) was elided to save context]", p.MimeType, len(p.Data))}
	}
	if parts == nil {
		return m, false
	}
	return providers.Message{Role: m.Role, Parts: parts}, true
}

// elideText is an older result's text as sent: its head and a marker.
func elideText(text, tool string, head int) string {
	kept := clip.String(text, head, "")
	return kept + fmt.Sprintf("\n[%d more bytes of this older %s result were elided to save context; call the tool again if you need them]", len(text)-len(kept), tool)
}

// elideCache keeps a session's history as last sent, elided, from one request to the next, so
// that a request elides and copies only what changed since the one before: the messages
// appended since, and the few whose results the moving boundary newly elides. Walking and
// copying the whole history on every request made CPU per turn grow with the session (issue 34).
//
// The history only grows between requests, except by a compaction (a new slice), a rewind (a
// shorter one) or an amended last message; the cache finds the messages it still shares with
// the history by identity (the same parts), so each of those costs one walk of the history,
// the next request's, and appends cost nothing of the kind. gen is the session's histGen: any
// other change of the history bumps it, which throws the cache away.
//
// The slice get returns is read by that request alone; the next get may rewrite its elements
// (one request of a session is built and sent at a time: the turn's loop).
type elideCache struct {
	mu                           sync.Mutex
	gen                          uint64
	keep, head, block, minSaving int
	base                         *providers.Message  // the first element of the history's array last seen
	hist                         []providers.Message // the history as last elided (its own array)
	out                          []providers.Message // hist elided
	first                        []int               // first[i]: the results in hist[:i]; len(hist)+1 of them
	saves                        []int               // saves[k]: what eliding result k saves (resultSavings)
	elide                        int                 // the results elided in out
	// The boundary's scan (elideBoundary) so far: the results scanned, the boundary it reached
	// and the bytes saved since.
	scanned, bound, acc int
}

// sameMessage reports whether a and b are the same message (not merely equal): the same role
// and the same parts array.
func sameMessage(a, b providers.Message) bool {
	return a.Role == b.Role && len(a.Parts) == len(b.Parts) && (len(a.Parts) == 0 || &a.Parts[0] == &b.Parts[0])
}

// get returns hist elided as elideToolResults would, and stable: how many of its first messages
// a later request sends unchanged unless the history is rewritten (a compaction, a rewind, an
// amend), the messages before the one holding the oldest result still sent whole.
func (c *elideCache) get(hist []providers.Message, gen uint64, keep, head, block, minSaving int) (msgs []providers.Message, stable int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first == nil || c.gen != gen || c.keep != keep || c.head != head || c.block != block || c.minSaving != minSaving {
		c.gen, c.keep, c.head, c.block, c.minSaving = gen, keep, head, block, minSaving
		c.base, c.hist, c.out, c.first, c.saves, c.elide = nil, nil, nil, []int{0}, nil, 0
		c.scanned, c.bound, c.acc = 0, 0, 0
	}
	// p: how many messages from the start the history still shares with the cache.
	p, n0 := 0, len(c.hist)
	if n0 > 0 && len(hist) >= n0 && &hist[0] == c.base && sameMessage(hist[n0-1], c.hist[n0-1]) {
		// Only appended to, in place: the usual case. (A shortening that appends grew back
		// in place past n0 replaced message n0-1, which the check sees.)
		p = n0
	} else {
		for p < min(len(hist), n0) && sameMessage(hist[p], c.hist[p]) {
			p++
		}
	}
	if p < n0 {
		// Shortened or changed: start from a fresh array, since the last request's slice
		// shares this one.
		c.out = append(make([]providers.Message, 0, len(hist)+16), c.out[:p]...)
		c.hist = c.hist[:p]
		c.first = c.first[:p+1]
		c.saves = c.saves[:c.first[p]]
		c.elide = min(c.elide, c.first[p])
		// The boundary may have counted results that are gone: scan the savings again (a
		// walk of integers).
		c.scanned, c.bound, c.acc = 0, 0, 0
	}
	for _, m := range hist[p:] {
		c.out = append(c.out, m)
		c.hist = append(c.hist, m)
		c.first = append(c.first, c.first[len(c.first)-1]+resultsIn(m))
		c.saves = resultSavings(c.saves, m, head)
	}
	c.base = nil
	if len(hist) > 0 {
		c.base = &hist[0]
	}
	// out[i] is hist[i] elided at c.elide; redo the messages whose results lie between the
	// old boundary and the new.
	c.bound, c.scanned, c.acc = elideBoundary(c.saves, c.scanned, c.bound, c.acc, keep, block, minSaving)
	e := c.bound
	lo, hi := min(c.elide, e), max(c.elide, e)
	if lo < hi {
		// The first message with a result at lo or after: first[i+1] > lo.
		j, _ := slices.BinarySearch(c.first, lo+1)
		for i := j - 1; i < len(hist) && c.first[i] < hi; i++ {
			c.out[i], _ = elideMessage(hist[i], c.first[i], e, head)
		}
	}
	c.elide = e
	return c.out[:len(c.out):len(c.out)], stableBefore(c.first, e)
}

// stableBefore is the index of the message holding result e, given first (first[i]: the results
// before message i), or the number of messages when there is no such result.
func stableBefore(first []int, e int) int {
	if e >= first[len(first)-1] {
		return len(first) - 1
	}
	// The first i with first[i] > e: message i-1 holds result e.
	i, _ := slices.BinarySearch(first, e+1)
	return i - 1
}

// withoutImages replaces every image of msgs by a note that it was left out, for a model that
// cannot read images; msgs itself is not changed.
func withoutImages(msgs []providers.Message) []providers.Message {
	var out []providers.Message
	for i, m := range msgs {
		var parts []providers.Part
		for j, p := range m.Parts {
			if p.Type != providers.PartImage {
				continue
			}
			if parts == nil {
				parts = append([]providers.Part(nil), m.Parts...)
			}
			parts[j] = providers.Part{Type: providers.PartText, Text: fmt.Sprintf("[an image (%s, %d bytes) was left out: this model cannot read images]", p.MimeType, len(p.Data))}
		}
		if parts != nil {
			if out == nil {
				out = append([]providers.Message(nil), msgs...)
			}
			out[i] = providers.Message{Role: m.Role, Parts: parts}
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

func summaryMessages(set *prompts.Set, summary string) []providers.Message {
	if set == nil {
		set = prompts.Default()
	}
	return []providers.Message{
		{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: set.Render("compaction.summary", prompts.Run{"SUMMARY": summary})}}},
		{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartText, Text: set.Render("compaction.acknowledgement", nil)}}},
	}
}

// summarize asks the model for a summary of msgs (a plain request: no tools), shortened to fit
// half the model's context window.
func (t *turn) summarize(msgs []providers.Message) (string, error) {
	window := t.window
	if window <= 0 { // /compact runs outside the loop that sets it
		window = capabilitiesOf(t.set, t.pcfg).ContextWindow
	}
	// A tenth is left for what messageSize does not count (JSON escapes, each dialect's framing).
	summarizeSystem, summarizeInstruction := t.texts().Render("compaction.system", nil), t.texts().Render("compaction.instruction", nil)
	budget := window/2*bytesPerToken*9/10 - len(summarizeSystem) - len(summarizeInstruction)
	req := &providers.Request{
		Model:     t.pcfg.Model,
		System:    summarizeSystem,
		Messages:  append(summaryInput(msgs, budget), providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: summarizeInstruction}}}),
		MaxTokens: 2048,
	}
	var text string
	var calls []sideCall
	var err error
	if t.set.Fast() == (config.FastModel{}) {
		var c sideCall
		text, c, err = collectText(t.ctx, t.prov, req)
		calls = []sideCall{c}
	} else {
		text, calls, err = t.s.m.collectSide(t.ctx, t.set, t.prov, t.pcfg, req)
	}
	t.addSide(calls)
	return text, err
}

const (
	// bytesPerToken is a cautious estimate for code and JSON (English prose is nearer 4).
	bytesPerToken = 3
	// summaryPartMax is the most of one text or tool-call argument sent for summarizing when
	// the history does not fit whole; summaryPartHead of it is kept.
	summaryPartMax  = 8 << 10
	summaryPartHead = 2 << 10
)

// summaryInput shortens the history sent to be summarized so that it fits budget bytes. A
// compaction runs because the history is near the context window, and sending it whole (old
// tool results included: 1.04 MB in one measured task, issue 18) could overflow the window it
// is meant to save. In order, until it fits: every tool result is cut to its head (the summary
// needs what was looked at, not all of it) and reasoning and images are left out; then long
// texts and tool-call arguments are cut; then the oldest exchanges are left out, keeping the
// first message (the user's goal, or the previous summary) and saying how many were left out.
// The stored history is not changed.
func summaryInput(hist []providers.Message, budget int) []providers.Message {
	out := make([]providers.Message, 0, len(hist))
	for _, m := range elideToolResults(hist, 0, elideHead, 1, 0) {
		parts := make([]providers.Part, 0, len(m.Parts))
		for _, p := range m.Parts {
			switch p.Type {
			case providers.PartThinking:
				continue
			case providers.PartImage:
				p = providers.Part{Type: providers.PartText, Text: "[an image, left out of the summary request]"}
			}
			parts = append(parts, p)
		}
		if len(parts) == 0 {
			parts = append(parts, providers.Part{Type: providers.PartText, Text: "[reasoning only]"})
		}
		out = append(out, providers.Message{Role: m.Role, Parts: parts})
	}
	if messagesSize(out) <= budget {
		return out
	}
	for i := range out {
		for j, p := range out[i].Parts {
			if len(p.Text) > summaryPartMax {
				head := clip.String(p.Text, summaryPartHead, "")
				out[i].Parts[j].Text = head + fmt.Sprintf("\n[%d more bytes cut for the summary]", len(p.Text)-len(head))
			}
			if len(p.Args) > summaryPartMax {
				head := clip.String(string(p.Args), summaryPartHead, "")
				b, _ := json.Marshal(map[string]string{"argumentsCutForTheSummary": head})
				out[i].Parts[j].Args = b
			}
		}
	}
	size := messagesSize(out)
	if size <= budget || len(out) < 3 {
		return out
	}
	// Leave out whole exchanges from the second message on: start again at the first user
	// message (not tool results) after which the rest fits, so calls and results stay paired.
	rest := size - messageSize(out[0])
	for k := 1; k < len(out); k++ {
		if m := out[k]; m.Role == providers.RoleUser && !isToolResults(m) && rest+messageSize(out[0]) <= budget {
			if k == 1 {
				return out
			}
			note := providers.Part{Type: providers.PartText, Text: fmt.Sprintf("[%d messages after this one were left out of the summary request to fit the context window]", k-1)}
			first := out[0]
			if first.Role == providers.RoleUser && !isToolResults(first) {
				joined := providers.Message{Role: providers.RoleUser, Parts: append(append(append([]providers.Part(nil), first.Parts...), note), m.Parts...)}
				return append([]providers.Message{joined}, out[k+1:]...)
			}
			return append([]providers.Message{{Role: providers.RoleUser, Parts: append([]providers.Part{note}, m.Parts...)}}, out[k+1:]...)
		}
		rest -= messageSize(out[k])
	}
	// Not even the last exchange fits: send it alone, cut as above.
	for k := len(out) - 1; k > 0; k-- {
		if out[k].Role == providers.RoleUser && !isToolResults(out[k]) {
			return out[k:]
		}
	}
	return out
}

// messageSize estimates a message's size on the wire, in bytes.
func messageSize(m providers.Message) int {
	n := 16
	for _, p := range m.Parts {
		n += 32 + len(p.Text) + len(p.Args) + len(p.ToolName) + len(p.ToolCallID) + len(p.Signature) + len(p.Redacted) + len(p.Data)*4/3
	}
	return n
}

func messagesSize(ms []providers.Message) int {
	n := 0
	for _, m := range ms {
		n += messageSize(m)
	}
	return n
}

// sideCall is one model request made beside the turn's own steps (a title, a summary, a
// review): the model it went to and the tokens it used, which the session's cost counts.
type sideCall struct {
	model string
	usage providers.Usage
}

// collectText runs a tool-less request and returns its text, and the request as a sideCall
// (what it used, failed or not: a provider bills what it streamed before failing).
func collectText(ctx context.Context, prov providers.Provider, req *providers.Request) (string, sideCall, error) {
	var b strings.Builder
	call := sideCall{model: req.Model}
	for ev := range prov.Stream(ctx, req) {
		switch ev.Type {
		case providers.EventTextDelta:
			b.WriteString(ev.Text)
		case providers.EventUsage:
			call.usage = ev.Usage // cumulative for the call
		case providers.EventFailed:
			if ev.Err != nil {
				return "", call, ev.Err
			}
			return "", call, fmt.Errorf("the provider failed")
		}
	}
	if ctx.Err() != nil {
		return "", call, ctx.Err()
	}
	return strings.TrimSpace(b.String()), call, nil
}

// compact replaces the history before keepFrom with a model-written summary, announced with
// compaction_update.
func (t *turn) compact(keepFrom int) error {
	s := t.s
	hist := s.historySnapshot()
	if keepFrom <= 0 || keepFrom > len(hist) {
		return nil
	}
	id := newID("cmp_")
	s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateCompactionUpdate, CompactionID: id, Status: "in_progress"})
	summary, err := t.summarize(hist[:keepFrom])
	if err != nil || summary == "" {
		s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateCompactionUpdate, CompactionID: id, Status: "failed"})
		if err == nil {
			err = fmt.Errorf("the model returned an empty summary")
		}
		return err
	}
	keep := len(hist) - keepFrom
	s.mu.Lock()
	// Messages appended since the snapshot stay after the kept ones.
	rest := s.history[keepFrom:]
	s.history = append(summaryMessages(s.m.texts(), summary), rest...)
	s.contextNotes = nil
	keep = len(rest)
	s.mu.Unlock()
	now := time.Now().UTC()
	s.noteRewind(rewind{at: now, kind: recCompact}) // older checkpoints' turns are summarized now
	s.record(record{T: recCompact, At: now, Summary: summary, Keep: keep})
	s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateCompactionUpdate, CompactionID: id, Status: "completed", Summary: summary})
	return nil
}

// compactCommand is /compact: summarize the whole history now.
func (t *turn) compactCommand() protocol.PromptResult {
	s := t.s
	s.mu.Lock()
	pid, n := s.providerID, len(s.history)
	s.mu.Unlock()
	if n == 0 {
		s.notice(protocol.SeverityInfo, "Nothing to compact yet", "")
		return protocol.PromptResult{StopReason: protocol.StopEndTurn}
	}
	prov, pcfg, err := s.m.d.Providers.Provider(s.providerCtx(t.ctx, t.set), pid)
	if err != nil {
		return t.fail(err)
	}
	t.prov, t.pcfg = prov, pcfg
	if err := t.compact(n); err != nil {
		if t.ctx.Err() != nil {
			return t.cancelled()
		}
		return t.fail(err)
	}
	return protocol.PromptResult{StopReason: protocol.StopEndTurn}
}

// maybeAutoCompact summarizes the turns before the current one when the last model call used
// more than the threshold of the context window.
func (t *turn) maybeAutoCompact() bool {
	if t.used == 0 || float64(t.used) < t.set.CompactThreshold*float64(t.window) {
		return false
	}
	hist := t.s.historySnapshot()
	// Keep the current turn whole: find its prompt (the last user message that is not tool results).
	keepFrom := -1
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Role == providers.RoleUser && !isToolResults(hist[i]) {
			keepFrom = i
			break
		}
	}
	if keepFrom <= 2 {
		return false
	}
	err := t.compact(keepFrom)
	if err != nil && t.ctx.Err() == nil {
		t.s.notice(protocol.SeverityWarning, "Automatic compaction failed", err.Error())
	}
	t.used = 0
	return err == nil
}

func isToolResults(m providers.Message) bool {
	for _, p := range m.Parts {
		if p.Type == providers.PartToolResult {
			return true
		}
	}
	return false
}

// makeTitle names the session after its first exchange with one short model request, in the
// background.
func (s *Session) makeTitle(prov providers.Provider, pcfg providers.Config) {
	hist := s.historySnapshot()
	var first string
	for _, m := range hist {
		if m.Role == providers.RoleUser {
			for _, p := range m.Parts {
				if p.Type == providers.PartText {
					first += p.Text + "\n"
				}
			}
			break
		}
	}
	if strings.TrimSpace(first) == "" {
		return
	}
	m := s.m
	// The settings as the turn that asks for the title has them, read here and not in the
	// background: the session's own (its project layer included), at the time of the turn.
	set := s.settings()
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		ctx, cancel := context.WithTimeout(m.bgCtx, 30*time.Second)
		defer cancel()
		req := &providers.Request{
			Model:     pcfg.Model,
			System:    m.text("chat_title.system", nil),
			Messages:  []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: m.text("chat_title.request", prompts.Run{"REQUEST": clip.String(first, 2000, "")})}}}},
			MaxTokens: 32,
		}
		title, calls, err := m.collectSide(ctx, set, prov, pcfg, req)
		s.addSideCost(set, calls)
		if err != nil || title == "" {
			return
		}
		title = strings.Trim(strings.SplitN(title, "\n", 2)[0], " \"'`.#*")
		title = clip.String(title, 80, "")
		if title == "" {
			return
		}
		s.mu.Lock()
		s.title = title
		s.mu.Unlock()
		s.record(record{T: recTitle, Title: title})
		s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateSessionInfoUpdate, SessionTitle: title, UpdatedAt: time.Now().UTC().Format(time.RFC3339)})
	}()
}
