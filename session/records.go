package session

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"

	"github.com/agentd-dev/agentd/internal/jscan"
	"github.com/agentd-dev/agentd/providers"
)

// History messages are most of what a load or a resume reads that is not replay, and
// encoding/json decoded them at about 80 MB/s, the floor of both (docs/benchmarks.md). A
// message record is decoded here with the one JSON scanner instead, reading exactly what
// encoding/json would read into a record: the line is first checked strictly (valid JSON in
// valid UTF-8), keys match as encoding/json matches them (jscan.Canonical), and anything this
// path does not read the way encoding/json does (an unknown key, a null, a value of the wrong
// type, base64 that does not decode) hands the line to encoding/json, which has the last word.
// TestMessageRecordsDecodeAsEncodingJSONDoes holds the two equal.

// messagePrefix starts every recMessage line ("t" is marshalled first).
var messagePrefix = []byte(`{"t":"message",`)

// decodeMessageRecord decodes a recMessage line into r; false (r untouched) when the line is
// for encoding/json. Each level is walked once, in place (jscan.Members and Elements).
func decodeMessageRecord(line []byte, r *record) bool {
	if jscan.ValidValueEnd(line, 0) != len(line) || !utf8.Valid(line) {
		return false
	}
	var out record
	var msg providers.Message
	var buf []byte
	var seen keys
	end := jscan.Members(line, 0, func(key []byte, vi int) int {
		k := jscan.Canonical(key, "t", "at", "message", "parentToolCallId")
		if !seen.first(k) {
			return -1
		}
		switch k {
		case "t":
			return stringAt(line, vi, &out.T, &buf)
		case "parentToolCallId":
			return stringAt(line, vi, &out.Parent, &buf)
		case "at":
			e := jscan.StringEnd(line, vi)
			if line[vi] != '"' || e < 0 || out.At.UnmarshalJSON(line[vi:e]) != nil {
				return -1
			}
			return e
		case "message":
			out.Message = &msg
			return messageAt(line, vi, &msg, &buf)
		}
		return -1
	})
	if end != len(line) || out.T != recMessage {
		return false
	}
	*r = out
	return true
}

// stringAt decodes the JSON string at d[i] into dst and returns the index past it; -1 for any
// other value (a null included).
func stringAt(d []byte, i int, dst *string, buf *[]byte) int {
	if d[i] != '"' {
		return -1
	}
	e := jscan.StringEnd(d, i)
	if e < 0 {
		return -1
	}
	s, ok := jscan.Unquote(d[i:e], buf)
	if !ok {
		return -1
	}
	*dst = s
	return e
}

func messageAt(d []byte, i int, m *providers.Message, buf *[]byte) int {
	var seen keys
	return jscan.Members(d, i, func(key []byte, vi int) int {
		k := jscan.Canonical(key, "role", "parts")
		if !seen.first(k) {
			return -1
		}
		switch k {
		case "role":
			var s string
			e := stringAt(d, vi, &s, buf)
			m.Role = providers.Role(s)
			return e
		case "parts":
			if d[vi] == 'n' { // a message without parts, as encoding/json writes it
				m.Parts = nil
				e, kind := jscan.ValueEnd(d, vi)
				if kind != jscan.KindNull {
					return -1
				}
				return e
			}
			m.Parts = []providers.Part{} // an empty array decodes to an empty slice, not nil
			return jscan.Elements(d, vi, func(pi int) int {
				m.Parts = append(m.Parts, providers.Part{})
				return partAt(d, pi, &m.Parts[len(m.Parts)-1], buf)
			})
		}
		return -1
	})
}

func partAt(d []byte, i int, p *providers.Part, buf *[]byte) int {
	var seen keys
	return jscan.Members(d, i, func(key []byte, vi int) int {
		k := jscan.Canonical(key, "type", "text", "signature", "redacted", "mimeType", "data", "toolCallId", "toolName", "args", "isError")
		if !seen.first(k) {
			return -1
		}
		switch k {
		case "type":
			var s string
			e := stringAt(d, vi, &s, buf)
			p.Type = providers.PartType(s)
			return e
		case "text":
			return stringAt(d, vi, &p.Text, buf)
		case "signature":
			return stringAt(d, vi, &p.Signature, buf)
		case "redacted":
			return stringAt(d, vi, &p.Redacted, buf)
		case "mimeType":
			return stringAt(d, vi, &p.MimeType, buf)
		case "toolCallId":
			return stringAt(d, vi, &p.ToolCallID, buf)
		case "toolName":
			return stringAt(d, vi, &p.ToolName, buf)
		case "data":
			var s string
			e := stringAt(d, vi, &s, buf)
			if e < 0 {
				return -1
			}
			var err error
			if p.Data, err = base64.StdEncoding.DecodeString(s); err != nil {
				return -1
			}
			return e
		case "args":
			e, _ := jscan.ValueEnd(d, vi)
			if e < 0 {
				return -1
			}
			p.Args = json.RawMessage(bytes.Clone(d[vi:e]))
			return e
		case "isError":
			e, kind := jscan.ValueEnd(d, vi)
			if kind != jscan.KindTrue && kind != jscan.KindFalse {
				return -1
			}
			p.IsError = kind == jscan.KindTrue
			return e
		}
		return -1
	})
}

// streamingPrefix starts every recStreaming line: a reply's checkpoints, a third of a
// transcript's records, decoded the same way as messages.
var streamingPrefix = []byte(`{"t":"streaming",`)

// decodeStreamingRecord decodes a recStreaming line into r, as decodeMessageRecord does.
func decodeStreamingRecord(line []byte, r *record) bool {
	if jscan.ValidValueEnd(line, 0) != len(line) || !utf8.Valid(line) {
		return false
	}
	var out record
	var sr streamRecord
	var buf []byte
	ok := true
	var seen keys
	_, err := jscan.EachMember(line, func(key, val []byte, kind byte) bool {
		k := jscan.Canonical(key, "t", "at", "streaming", "parentToolCallId")
		if !seen.first(k) {
			ok = false
			return false
		}
		switch k {
		case "t":
			ok = unquoteTo(val, kind, &out.T, &buf)
		case "at":
			ok = kind == jscan.KindString && out.At.UnmarshalJSON(val) == nil
		case "parentToolCallId":
			ok = unquoteTo(val, kind, &out.Parent, &buf)
		case "streaming":
			ok = kind == jscan.KindObject && decodeStreaming(val, &sr, &buf)
			out.Streaming = &sr
		default:
			ok = false
		}
		return ok
	})
	if err != nil || !ok || out.T != recStreaming {
		return false
	}
	*r = out
	return true
}

func decodeStreaming(d []byte, sr *streamRecord, buf *[]byte) bool {
	ok := true
	var seen keys
	_, err := jscan.EachMember(d, func(key, val []byte, kind byte) bool {
		k := jscan.Canonical(key, "messageId", "text", "thought", "calls", "done")
		if !seen.first(k) {
			ok = false
			return false
		}
		switch k {
		case "messageId":
			ok = unquoteTo(val, kind, &sr.MessageID, buf)
		case "text":
			ok = unquoteTo(val, kind, &sr.Text, buf)
		case "thought":
			ok = unquoteTo(val, kind, &sr.Thought, buf)
		case "done":
			ok = kind == jscan.KindTrue || kind == jscan.KindFalse
			sr.Done = kind == jscan.KindTrue
		case "calls":
			if ok = kind == jscan.KindArray; !ok {
				break
			}
			sr.Calls = []announcedCall{}
			err := jscan.EachElement(val, func(cv []byte, ck byte) bool {
				var c announcedCall
				ok = ck == jscan.KindObject && decodeCall(cv, &c, buf)
				sr.Calls = append(sr.Calls, c)
				return ok
			})
			ok = ok && err == nil
		default:
			ok = false
		}
		return ok
	})
	return err == nil && ok
}

func decodeCall(d []byte, c *announcedCall, buf *[]byte) bool {
	ok := true
	var seen keys
	_, err := jscan.EachMember(d, func(key, val []byte, kind byte) bool {
		k := jscan.Canonical(key, "id", "name", "title", "kind")
		if !seen.first(k) {
			ok = false
			return false
		}
		switch k {
		case "id":
			ok = unquoteTo(val, kind, &c.ID, buf)
		case "name":
			ok = unquoteTo(val, kind, &c.Name, buf)
		case "title":
			ok = unquoteTo(val, kind, &c.Title, buf)
		case "kind":
			ok = unquoteTo(val, kind, &c.Kind, buf)
		default:
			ok = false
		}
		return ok
	})
	return err == nil && ok
}

// unquoteTo decodes a JSON string into dst; false for any other kind (a null included).
func unquoteTo(val []byte, kind byte, dst *string, buf *[]byte) bool {
	if kind != jscan.KindString {
		return false
	}
	s, ok := jscan.Unquote(val, buf)
	*dst = s
	return ok
}

// keys are the keys of one object seen so far: a key twice (which encoding/json merges into
// what the first one decoded) is for encoding/json.
type keys struct {
	n  int
	ks [12]string
}

func (ks *keys) first(k string) bool {
	for _, s := range ks.ks[:ks.n] {
		if s == k {
			return false
		}
	}
	if ks.n == len(ks.ks) {
		return false
	}
	ks.ks[ks.n] = k
	ks.n++
	return true
}

// A compaction keeps only the last messages of the history, so the messages before it need
// not be decoded at all: a message line is kept as it is (deferMessage) and decoded only when
// something needs the history whole (a truncation, an amend, an interrupted reply, the end of
// the file) or, at a compaction, only if it is one of the messages the compaction keeps. A
// resume of a long session then decodes little more than the history since its last compaction.

// messageAtPrefix starts every recMessage line ("t" is marshalled first, "at" second).
var messageAtPrefix = []byte(`{"t":"message","at":"`)

// deferMessage keeps a message line undecoded, when it is valid JSON in UTF-8 (as decoding it
// would require), no subagent's and no streaming reply is open (which a message closes or
// ends, depending on its role).
func (l *loaded) deferMessage(line []byte) bool {
	if l.eager || l.cut != nil || !bytes.HasPrefix(line, messageAtPrefix) ||
		bytes.Contains(line, []byte(`"parentToolCallId"`)) {
		return false
	}
	at := line[len(messageAtPrefix):]
	end := bytes.IndexByte(at, '"')
	if end <= 0 || jscan.ValidValueEnd(line, 0) != len(line) || !utf8.Valid(line) {
		return false
	}
	l.pending = append(l.pending, pendingMessage{line: l.keep(line)})
	l.lastAt = append(l.lastAt[:0], at[:end]...)
	return true
}

// flushMessages decodes the pending message lines onto the history.
func (l *loaded) flushMessages() {
	for _, e := range l.pending {
		if m, ok := decodePending(e); ok {
			l.history = append(l.history, m)
		}
	}
	l.pending = l.pending[:0]
}

// flushLast is flushMessages for a compaction that keeps the last keep messages: the pending
// lines before those are dropped undecoded when the pending lines alone hold them. (A line
// that does not decode is one message fewer, so the count is taken over decoded messages.)
func (l *loaded) flushLast(keep int) {
	var tail []providers.Message
	i := len(l.pending) - 1
	for ; i >= 0 && len(tail) < keep; i-- {
		if m, ok := decodePending(l.pending[i]); ok {
			tail = append(tail, m)
		}
	}
	if len(tail) < keep {
		// The history before the pending lines holds some of the kept messages.
		l.history = append(l.history, reversed(tail)...)
		l.pending = l.pending[:0]
		return
	}
	l.history = append(l.history[:0:0], reversed(tail)...)
	l.pending = l.pending[:0]
}

func reversed(ms []providers.Message) []providers.Message {
	for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
		ms[i], ms[j] = ms[j], ms[i]
	}
	return ms
}

// pendingMessage is a message read but not on the history yet: its line, or decoded (m).
type pendingMessage struct {
	line []byte
	m    *providers.Message
}

// decodePending decodes a pending message as the reader would have.
func decodePending(e pendingMessage) (providers.Message, bool) {
	if e.m != nil {
		return *e.m, true
	}
	var r record
	if line := e.line; !decodeMessageRecord(line, &r) && json.Unmarshal(line, &r) != nil {
		return providers.Message{}, false
	}
	if r.Message == nil {
		return providers.Message{}, false
	}
	return *r.Message, true
}
