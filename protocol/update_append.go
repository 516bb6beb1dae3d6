package protocol

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendSessionNotification appends the JSON of n to dst without reflection. Its output is byte
// for byte what json.Marshal writes for the same value (same key order, same escaping, HTML
// characters included), so it can replace the reflective path for agent/session/update, the
// daemon's hottest message. Two differences, both where json.Marshal would fail: a RawInput or
// RawOutput that is not valid JSON (arguments still streaming) is written as a JSON string, and
// a NaN or infinite cost as null.
func AppendSessionNotification(dst []byte, n *SessionNotification) []byte {
	dst = append(dst, `{"sessionId":`...)
	dst = appendString(dst, n.SessionID)
	dst = append(dst, `,"update":`...)
	dst = AppendSessionUpdate(dst, &n.Update)
	return append(dst, '}')
}

// AppendStoredSessionNotification appends the JSON of n: its update as it is, so the caller
// must have checked that it is one valid JSON object.
func AppendStoredSessionNotification(dst []byte, n *StoredSessionNotification) []byte {
	dst = append(dst, `{"sessionId":`...)
	dst = appendString(dst, n.SessionID)
	dst = append(dst, `,"update":`...)
	dst = append(dst, n.Update...)
	return append(dst, '}')
}

// AppendSessionUpdate appends the JSON of u, as SessionUpdate.MarshalJSON writes it.
func AppendSessionUpdate(dst []byte, u *SessionUpdate) []byte {
	dst = append(dst, `{"sessionUpdate":`...)
	dst = appendString(dst, u.SessionUpdate)
	if u.MessageID != "" {
		dst = append(dst, `,"messageId":`...)
		dst = appendString(dst, u.MessageID)
	}
	if u.ToolCallID != "" {
		dst = append(dst, `,"toolCallId":`...)
		dst = appendString(dst, u.ToolCallID)
	}
	if u.Kind != "" {
		dst = append(dst, `,"kind":`...)
		dst = appendString(dst, u.Kind)
	}
	if u.Status != "" {
		dst = append(dst, `,"status":`...)
		dst = appendString(dst, u.Status)
	}
	if len(u.Locations) > 0 {
		dst = append(dst, `,"locations":[`...)
		for i := range u.Locations {
			if i > 0 {
				dst = append(dst, ',')
			}
			l := &u.Locations[i]
			dst = append(dst, `{"path":`...)
			dst = appendString(dst, l.Path)
			if l.Line != 0 {
				dst = append(dst, `,"line":`...)
				dst = strconv.AppendInt(dst, int64(l.Line), 10)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(u.RawInput) > 0 {
		dst = append(dst, `,"rawInput":`...)
		dst = appendRaw(dst, u.RawInput)
	}
	if len(u.RawOutput) > 0 {
		dst = append(dst, `,"rawOutput":`...)
		dst = appendRaw(dst, u.RawOutput)
	}
	if len(u.Entries) > 0 {
		dst = append(dst, `,"entries":[`...)
		for i := range u.Entries {
			if i > 0 {
				dst = append(dst, ',')
			}
			e := &u.Entries[i]
			dst = append(dst, `{"content":`...)
			dst = appendString(dst, e.Content)
			dst = append(dst, `,"priority":`...)
			dst = appendString(dst, e.Priority)
			dst = append(dst, `,"status":`...)
			dst = appendString(dst, e.Status)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(u.AvailableCommands) > 0 {
		dst = append(dst, `,"availableCommands":[`...)
		for i := range u.AvailableCommands {
			if i > 0 {
				dst = append(dst, ',')
			}
			c := &u.AvailableCommands[i]
			dst = append(dst, `{"name":`...)
			dst = appendString(dst, c.Name)
			dst = append(dst, `,"description":`...)
			dst = appendString(dst, c.Description)
			if c.Input != nil {
				dst = append(dst, `,"input":{"hint":`...)
				dst = appendString(dst, c.Input.Hint)
				dst = append(dst, '}')
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if u.CurrentModeID != "" {
		dst = append(dst, `,"currentModeId":`...)
		dst = appendString(dst, u.CurrentModeID)
	}
	if len(u.ConfigOptions) > 0 {
		dst = append(dst, `,"configOptions":`...)
		dst = appendConfigOptions(dst, u.ConfigOptions)
	}
	if u.UpdatedAt != "" {
		dst = append(dst, `,"updatedAt":`...)
		dst = appendString(dst, u.UpdatedAt)
	}
	if u.Used != nil {
		dst = append(dst, `,"used":`...)
		dst = strconv.AppendInt(dst, int64(*u.Used), 10)
	}
	if u.Size != nil {
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, int64(*u.Size), 10)
	}
	if u.Cost != nil {
		dst = append(dst, `,"cost":{"amount":`...)
		dst = appendFloat(dst, u.Cost.Amount)
		dst = append(dst, `,"currency":`...)
		dst = appendString(dst, u.Cost.Currency)
		dst = append(dst, '}')
	}
	if u.CompactionID != "" {
		dst = append(dst, `,"compactionId":`...)
		dst = appendString(dst, u.CompactionID)
	}
	if u.Summary != "" {
		dst = append(dst, `,"summary":`...)
		dst = appendString(dst, u.Summary)
	}
	if u.Severity != "" {
		dst = append(dst, `,"severity":`...)
		dst = appendString(dst, u.Severity)
	}
	if u.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = appendString(dst, u.Description)
	}
	if len(u.Meta) > 0 {
		dst = append(dst, `,"_meta":`...)
		dst = appendAny(dst, u.Meta)
	}
	title := u.Title
	switch u.SessionUpdate {
	case UpdateToolCall, UpdateToolCallUpdate:
		if u.ToolContent != nil {
			dst = append(dst, `,"content":[`...)
			for i := range u.ToolContent {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendToolCallContent(dst, &u.ToolContent[i])
			}
			dst = append(dst, ']')
		}
	case UpdateSessionInfoUpdate:
		title = u.SessionTitle
	case UpdateNotice:
		title = u.NoticeTitle
	default:
		if u.Content != nil {
			dst = append(dst, `,"content":`...)
			dst = appendContentBlock(dst, u.Content)
		}
	}
	if title != "" {
		dst = append(dst, `,"title":`...)
		dst = appendString(dst, title)
	}
	return append(dst, '}')
}

func appendToolCallContent(dst []byte, c *ToolCallContent) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendString(dst, c.Type)
	if c.Path != "" {
		dst = append(dst, `,"path":`...)
		dst = appendString(dst, c.Path)
	}
	if c.Type == "diff" { // oldText is a diff's key (null: a new file); other kinds have none
		dst = append(dst, `,"oldText":`...)
		if c.OldText == nil {
			dst = append(dst, "null"...)
		} else {
			dst = appendString(dst, *c.OldText)
		}
	}
	if c.NewText != nil {
		dst = append(dst, `,"newText":`...)
		dst = appendString(dst, *c.NewText)
	}
	if c.Content != nil {
		dst = append(dst, `,"content":`...)
		dst = appendContentBlock(dst, c.Content)
	}
	return append(dst, '}')
}

func appendContentBlock(dst []byte, b *ContentBlock) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendString(dst, b.Type)
	if b.Text != "" {
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, b.Text)
	}
	if b.MimeType != "" {
		dst = append(dst, `,"mimeType":`...)
		dst = appendString(dst, b.MimeType)
	}
	if b.Data != "" {
		dst = append(dst, `,"data":`...)
		dst = appendString(dst, b.Data)
	}
	if b.URI != "" {
		dst = append(dst, `,"uri":`...)
		dst = appendString(dst, b.URI)
	}
	if b.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, b.Name)
	}
	if r := b.Resource; r != nil {
		dst = append(dst, `,"resource":{"uri":`...)
		dst = appendString(dst, r.URI)
		if r.Text != "" {
			dst = append(dst, `,"text":`...)
			dst = appendString(dst, r.Text)
		}
		if r.Blob != "" {
			dst = append(dst, `,"blob":`...)
			dst = appendString(dst, r.Blob)
		}
		if r.MimeType != "" {
			dst = append(dst, `,"mimeType":`...)
			dst = appendString(dst, r.MimeType)
		}
		dst = append(dst, '}')
	}
	if len(b.Meta) > 0 {
		dst = append(dst, `,"_meta":`...)
		dst = appendAny(dst, b.Meta)
	}
	return append(dst, '}')
}

func appendConfigOptions(dst []byte, opts []ConfigOption) []byte {
	dst = append(dst, '[')
	for i := range opts {
		if i > 0 {
			dst = append(dst, ',')
		}
		o := &opts[i]
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, o.ID)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, o.Name)
		if o.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = appendString(dst, o.Description)
		}
		if o.Category != "" {
			dst = append(dst, `,"category":`...)
			dst = appendString(dst, o.Category)
		}
		dst = append(dst, `,"type":`...)
		dst = appendString(dst, o.Type)
		dst = append(dst, `,"currentValue":`...)
		switch {
		case o.Type == ConfigBoolean && o.CurrentValue == "true":
			dst = append(dst, "true"...) // a boolean has no options
		case o.Type == ConfigBoolean:
			dst = append(dst, "false"...)
		default:
			dst = appendString(dst, o.CurrentValue)
			dst = appendSelectValues(dst, o.Options)
		}
		if len(o.Meta) > 0 {
			dst = append(dst, `,"_meta":`...)
			dst = appendAny(dst, o.Meta)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendSelectValues appends a select's options member.
func appendSelectValues(dst []byte, opts []ConfigOptionValue) []byte {
	dst = append(dst, `,"options":`...)
	if opts == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for j := range opts {
		if j > 0 {
			dst = append(dst, ',')
		}
		v := &opts[j]
		dst = append(dst, `{"value":`...)
		dst = appendString(dst, v.Value)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, v.Name)
		if v.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = appendString(dst, v.Description)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendAny is the slow path for free-form values (_meta).
func appendAny(dst []byte, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, b...)
}

// appendRaw appends a raw JSON value compacted and HTML-escaped as json.Marshal does, or, when
// it is not valid JSON, as a string.
func appendRaw(dst []byte, raw json.RawMessage) []byte {
	if !json.Valid(raw) {
		return appendString(dst, string(raw))
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch {
			case c == '\\':
				dst = append(dst, c, raw[i+1])
				i++
				continue
			case c == '"':
				inString = false
			case c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
				continue
			case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
				dst = append(dst, '\\', 'u', '2', '0', '2', hex[raw[i+2]&0xF])
				i += 2
				continue
			}
			dst = append(dst, c)
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		}
		dst = append(dst, c)
	}
	return dst
}

func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string with encoding/json's escaping: control characters,
// quotes and backslashes, the HTML characters <, > and &, U+2028 and U+2029, and invalid UTF-8
// replaced by U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendJSONString appends s as json.Marshal writes a string (HTML characters, U+2028 and U+2029
// escaped; invalid UTF-8 as U+FFFD), for the other per-message encoders (the JSON-RPC envelope).
func AppendJSONString(dst []byte, s string) []byte { return appendString(dst, s) }
