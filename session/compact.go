package session

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentd-dev/agentd/prompts"
	"strings"
	"sync"
	"time"
	"unsafe"

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
)

// elideToolResults returns the history to send: tool results older than the most recent keep
// are cut to a head excerpt and a marker asking the model to call the tool again. User and
// assistant text are untouched, and so is the stored history (changed messages are copies).
//
// The boundary moves in steps of block results, counted from the start of the history: the
// first block·⌊(n−keep)/block⌋ of the n results are elided, so between keep and keep+block−1
// results are sent whole and the messages before the newest ones stay byte-identical from one
// request to the next until the boundary jumps again. block 1 elides all but the last keep.
func elideToolResults(hist []providers.Message, keep, head, block int) []providers.Message {
	return elideToolResultsMemo(hist, keep, head, block, nil)
}

// elideToolResultsMemo is elideToolResults taking each result's elided text from memo (nil:
// none) when it has cut the same text before: every request of a session elides the same older
// results again, and cutting each one anew made CPU per turn grow with the session (issue 34).
func elideToolResultsMemo(hist []providers.Message, keep, head, block int, memo *elideMemo) []providers.Message {
	memo.begin()
	defer memo.end()
	total := 0
	for _, m := range hist {
		for _, p := range m.Parts {
			if p.Type == providers.PartToolResult {
				total++
			}
		}
	}
	block = max(block, 1)
	elide := max(total-keep, 0) / block * block
	whole := total - elide // the newest results sent whole: keep ≤ whole < keep+block
	seen := 0
	var out []providers.Message
	for i := len(hist) - 1; i >= 0; i-- {
		m := hist[i]
		var parts []providers.Part
		var older map[string]bool // the calls of this message's results that are not sent whole
		// Only a message with an image needs older (every request walks the whole history, so a
		// map per message made each turn's CPU grow with the session, issue 34).
		hasImage := false
		for _, p := range m.Parts {
			if p.Type == providers.PartImage && p.ToolCallID != "" {
				hasImage = true
				break
			}
		}
		for j := len(m.Parts) - 1; j >= 0; j-- {
			p := m.Parts[j]
			if p.Type != providers.PartToolResult {
				continue
			}
			seen++
			if seen <= whole {
				continue
			}
			if hasImage {
				if older == nil {
					older = map[string]bool{}
				}
				older[p.ToolCallID] = true
			}
			if len(p.Text) <= head+200 {
				continue
			}
			if parts == nil {
				parts = append([]providers.Part(nil), m.Parts...)
			}
			parts[j].Text = memo.elide(p.Text, p.ToolName, head)
		}
		// An older result's images go the same way, whatever its text's length.
		for j, p := range m.Parts {
			if older == nil {
				break
			}
			if p.Type != providers.PartImage || p.ToolCallID == "" || !older[p.ToolCallID] {
				continue
			}
			if parts == nil {
				parts = append([]providers.Part(nil), m.Parts...)
			}
			parts[j] = providers.Part{Type: providers.PartText, Text: fmt.Sprintf("[an image of an older tool result (%s, %d bytes) was elided to save context]", p.MimeType, len(p.Data))}
		}
		if parts != nil {
			if out == nil {
				out = append([]providers.Message(nil), hist...)
			}
			out[i] = providers.Message{Role: m.Role, Parts: parts}
		}
	}
	if out == nil {
		return hist
	}
	return out
}

// elideText is an older result's text as sent: its head and a marker.
func elideText(text, tool string, head int) string {
	kept := clip.String(text, head, "")
	return kept + fmt.Sprintf("\n[%d more bytes of this older %s result were elided to save context; call the tool again if you need them]", len(text)-len(kept), tool)
}

// elideMemo remembers results' elided texts, keyed by the address of the text's bytes: the
// history's strings are shared by every snapshot of it, so a lookup costs no hashing of the
// text. An entry holds the original string, which keeps its bytes from being freed and their
// address from being reused by another text while the entry lives, and the lookup still compares
// it (equal pointer and length: one comparison) before using the entry. Each request keeps only
// the entries it used, so the memo never holds a result the history no longer has (after a
// compaction or a rewind).
type elideMemo struct {
	mu   sync.Mutex
	m    map[*byte]elidedText // the previous request's
	next map[*byte]elidedText // this request's, while it runs
}

type elidedText struct {
	orig, tool, text string
	head             int
}

// begin starts a request's use of the memo; end finishes it. Between them the memo is locked.
func (c *elideMemo) begin() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.next = make(map[*byte]elidedText, len(c.m))
}

func (c *elideMemo) end() {
	if c == nil {
		return
	}
	c.m, c.next = c.next, nil
	c.mu.Unlock()
}

func (c *elideMemo) elide(text, tool string, head int) string {
	if c == nil || text == "" {
		return elideText(text, tool, head)
	}
	k := unsafe.StringData(text)
	e, ok := c.m[k]
	if !ok || e.orig != text || e.tool != tool || e.head != head {
		e = elidedText{orig: text, tool: tool, text: elideText(text, tool, head), head: head}
	}
	c.next[k] = e
	return e.text
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
	for _, m := range elideToolResults(hist, 0, elideHead, 1) {
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
