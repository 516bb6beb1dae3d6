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
// for encoding/json.
func decodeMessageRecord(line []byte, r *record) bool {
	if jscan.ValidValueEnd(line, 0) != len(line) || !utf8.Valid(line) {
		return false
	}
	var out record
	var msg providers.Message
	var buf []byte
	str := func(val []byte, kind byte, dst *string) bool {
		if kind != jscan.KindString {
			return false
		}
		s, ok := jscan.Unquote(val, &buf)
		*dst = s
		return ok
	}
	ok := true
	var seen keys
	_, err := jscan.EachMember(line, func(key, val []byte, kind byte) bool {
		k := jscan.Canonical(key, "t", "at", "message", "parentToolCallId")
		if !seen.first(k) {
			ok = false
			return false
		}
		switch k {
		case "t":
			ok = str(val, kind, &out.T)
		case "at":
			ok = kind == jscan.KindString && out.At.UnmarshalJSON(val) == nil
		case "parentToolCallId":
			ok = str(val, kind, &out.Parent)
		case "message":
			ok = kind == jscan.KindObject && decodeMessage(val, &msg, &buf)
			out.Message = &msg
		default:
			ok = false
		}
		return ok
	})
	if err != nil || !ok || out.T != recMessage {
		return false
	}
	*r = out
	return true
}

func decodeMessage(d []byte, m *providers.Message, buf *[]byte) bool {
	ok := true
	var seen keys
	_, err := jscan.EachMember(d, func(key, val []byte, kind byte) bool {
		k := jscan.Canonical(key, "role", "parts")
		if !seen.first(k) {
			ok = false
			return false
		}
		switch k {
		case "role":
			var s string
			if kind != jscan.KindString {
				ok = false
				break
			}
			s, ok = jscan.Unquote(val, buf)
			m.Role = providers.Role(s)
		case "parts":
			if kind == jscan.KindNull { // a message without parts, as encoding/json writes it
				m.Parts = nil
				break
			}
			if kind != jscan.KindArray {
				ok = false
				break
			}
			m.Parts = []providers.Part{} // an empty array decodes to an empty slice, not nil
			err := jscan.EachElement(val, func(pv []byte, pk byte) bool {
				var p providers.Part
				ok = pk == jscan.KindObject && decodePart(pv, &p, buf)
				m.Parts = append(m.Parts, p)
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

func decodePart(d []byte, p *providers.Part, buf *[]byte) bool {
	ok := true
	var seen keys
	_, err := jscan.EachMember(d, func(key, val []byte, kind byte) bool {
		var dst *string
		k := jscan.Canonical(key, "type", "text", "signature", "redacted", "mimeType", "data", "toolCallId", "toolName", "args", "isError")
		if !seen.first(k) {
			ok = false
			return false
		}
		switch k {
		case "type":
			var s string
			if ok = kind == jscan.KindString; ok {
				s, ok = jscan.Unquote(val, buf)
			}
			p.Type = providers.PartType(s)
			return ok
		case "text":
			dst = &p.Text
		case "signature":
			dst = &p.Signature
		case "redacted":
			dst = &p.Redacted
		case "mimeType":
			dst = &p.MimeType
		case "toolCallId":
			dst = &p.ToolCallID
		case "toolName":
			dst = &p.ToolName
		case "data":
			var s string
			if ok = kind == jscan.KindString; ok {
				s, ok = jscan.Unquote(val, buf)
			}
			if ok {
				var err error
				p.Data, err = base64.StdEncoding.DecodeString(s)
				ok = err == nil
			}
			return ok
		case "args":
			p.Args = json.RawMessage(bytes.Clone(val))
			return true
		case "isError":
			ok = kind == jscan.KindTrue || kind == jscan.KindFalse
			p.IsError = kind == jscan.KindTrue
			return ok
		default:
			ok = false
			return false
		}
		if ok = kind == jscan.KindString; ok {
			*dst, ok = jscan.Unquote(val, buf)
		}
		return ok
	})
	return err == nil && ok
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
