package session

import (
	"strings"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

// A reply is written to the transcript whole when its step ends. So that a kill -9 does not lose
// the reply being streamed, the stream also saves what the user has seen on a cadence: the text
// and thought added and the calls announced since the last save, every checkpointInterval or
// checkpointBytes, whichever comes first, as recStreaming records (each one write(2), like every
// record). The step's end closes them: its assistant message, or a done record when it leaves
// none. A load that finds them unclosed shows the reply as far as it got, marked interrupted,
// and tells the model its previous reply was cut.
const (
	checkpointInterval = 250 * time.Millisecond
	checkpointBytes    = 4 << 10
	// metaInterrupted marks the replayed updates of a reply cut by the daemon's death.
	metaInterrupted = "agentd/interrupted"
)

// streamRecord is the body of a recStreaming record: what a streaming step added since its last
// checkpoint, or Done once the step ended.
type streamRecord struct {
	MessageID string          `json:"messageId"`
	Text      string          `json:"text,omitempty"`
	Thought   string          `json:"thought,omitempty"`
	Calls     []announcedCall `json:"calls,omitempty"`
	Done      bool            `json:"done,omitempty"`
}

type announcedCall struct {
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	Title string `json:"title,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

// checkpointer saves a streaming step's progress; its fields count what is saved already.
type checkpointer struct {
	s             *Session
	text, thought int
	calls         int
	wrote         bool
	timer         *time.Timer
}

// unsaved is how many bytes the step has streamed since the last save, calls counting as a
// checkpoint's worth so they are saved at once.
func (cp *checkpointer) unsaved(a *assembly) int {
	n := a.textOut.Len() - cp.text + a.thoughtOut.Len() - cp.thought
	if len(a.st.calls) > cp.calls {
		n += checkpointBytes
	}
	return n
}

// progress saves at once when enough bytes are waiting, and otherwise, when anything is
// waiting, makes sure save runs (on the timer's goroutine) within checkpointInterval.
func (cp *checkpointer) progress(a *assembly, save func()) {
	if cp.s.file == nil {
		return // nothing is persisted
	}
	n := cp.unsaved(a)
	switch {
	case n == 0:
	case n >= checkpointBytes:
		cp.save(a)
	case cp.timer == nil:
		cp.timer = time.AfterFunc(checkpointInterval, save)
	}
}

// save writes what the step streamed since the last save.
func (cp *checkpointer) save(a *assembly) {
	if cp.timer != nil {
		cp.timer.Stop()
		cp.timer = nil
	}
	if cp.unsaved(a) == 0 {
		return
	}
	r := &streamRecord{MessageID: a.st.msgID, Text: a.textOut.String()[cp.text:], Thought: a.thoughtOut.String()[cp.thought:]}
	for _, c := range a.st.calls[cp.calls:] {
		r.Calls = append(r.Calls, announcedCall{ID: c.id, Name: c.name, Title: c.title, Kind: c.kind})
	}
	cp.text, cp.thought, cp.calls = a.textOut.Len(), a.thoughtOut.Len(), len(a.st.calls)
	cp.wrote = true
	cp.s.record(record{T: recStreaming, Streaming: r})
}

// done stops the checkpoints of a step that ended and appends to recs the record that closes
// them, when it wrote any, for the caller to write after the step's own records.
func (cp *checkpointer) done(recs []record, msgID string) []record {
	if cp.timer != nil {
		cp.timer.Stop()
	}
	if cp.wrote {
		recs = append(recs, record{T: recStreaming, Streaming: &streamRecord{MessageID: msgID, Done: true}})
	}
	return recs
}

// interrupted is a streaming step read back from its checkpoints.
type interrupted struct {
	msgID         string
	text, thought strings.Builder
	calls         []announcedCall
}

// streamed follows the streaming checkpoints while a transcript is read: r is the next record.
// A step's checkpoints are closed by its done record or its assistant message; a record of a
// later turn (a user message, a compaction) or the end of the file (r nil) finds them open, and
// the reply is then added where it was cut.
func (l *loaded) streamed(r *record) {
	switch {
	case r != nil && r.T == recStreaming && r.Streaming != nil:
		sr := r.Streaming
		if sr.Done {
			l.cut = nil
			return
		}
		if l.cut == nil || l.cut.msgID != sr.MessageID {
			l.endCut()
			l.cut = &interrupted{msgID: sr.MessageID}
		}
		l.cut.text.WriteString(sr.Text)
		l.cut.thought.WriteString(sr.Thought)
		l.cut.calls = append(l.cut.calls, sr.Calls...)
	case l.cut == nil:
	case r == nil, r.T == recCompact, r.T == recTruncate:
		l.endCut()
	case r.T == recMessage && r.Message != nil:
		if r.Message.Role == providers.RoleAssistant {
			l.cut = nil // the step ended and wrote its reply
		} else {
			l.endCut()
		}
	}
}

// endCut adds an interrupted reply to the history and the replay.
func (l *loaded) endCut() {
	c := l.cut
	if c == nil {
		return
	}
	l.cut = nil
	meta := protocol.Meta{metaInterrupted: true}
	if c.thought.Len() > 0 {
		l.addUpdate(protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentThoughtChunk, MessageID: c.msgID, Content: &protocol.ContentBlock{Type: "text", Text: c.thought.String()}, Meta: meta})
	}
	if c.text.Len() > 0 {
		l.addUpdate(protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: c.msgID, Content: &protocol.ContentBlock{Type: "text", Text: c.text.String()}, Meta: meta})
	}
	var names []string
	for _, call := range c.calls {
		l.addUpdate(protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCall, ToolCallID: call.ID, Title: call.Title, Kind: call.Kind, Status: protocol.StatusFailed, Meta: meta})
		names = append(names, call.Name)
	}
	l.addUpdate(protocol.SessionUpdate{SessionUpdate: protocol.UpdateNotice, Severity: protocol.SeverityWarning, NoticeTitle: "This reply was cut off: agentd stopped while it was streaming", Meta: meta})
	note := "[agentd stopped while this reply was streaming: it was cut off here"
	if len(names) > 0 {
		note += ", and the tool calls it had started (" + strings.Join(names, ", ") + ") never ran"
	}
	note += ".]"
	text := note
	if c.text.Len() > 0 {
		text = c.text.String() + "\n\n" + note
	}
	l.flushMessages()
	l.history = append(l.history, providers.Message{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartText, Text: text}}})
}
