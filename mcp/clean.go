package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Caps of server-supplied strings, in characters.
const (
	maxLabel       = 64  // a server label or a tool name shown to the user
	maxTitle       = 120 // a tool's title
	MaxDescription = 200 // a description the model reads
)

// Clean flattens s to one line: every run of whitespace (line breaks included) becomes one
// space, control and format characters (escape sequences, bidi overrides, zero-width marks) are
// removed, and the result is cut to max characters (the last one an "…"). It is the one gate every string a server
// supplies passes before a user or a model sees it, so no server can forge lines or structure in a
// permission prompt or the tool catalog.
func Clean(s string, max int) string {
	var b strings.Builder
	space := false
	s = stripEscapes(s)
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), r == unicode.ReplacementChar:
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	out := b.String()
	if utf8.RuneCountInString(out) <= max {
		return out
	}
	runes := []rune(out)
	return string(runes[:max-1]) + "…"
}

// stripEscapes removes terminal escape sequences whole (CSI "ESC [ ... final", OSC "ESC ] ...
// BEL or ESC \\", and two-character ones), so none leaves its parameters behind as text.
func stripEscapes(s string) string {
	if !strings.ContainsAny(s, "\x1b\u009b") {
		return s
	}
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r != 0x1b && r != 0x9b {
			b.WriteRune(r)
			continue
		}
		kind := '['
		if r == 0x1b {
			if i+1 >= len(rs) {
				break
			}
			i++
			kind = rs[i]
		}
		switch kind {
		case '[': // CSI: parameters and intermediates, then one final byte in @..~
			for i+1 < len(rs) {
				i++
				if rs[i] >= 0x40 && rs[i] <= 0x7e {
					break
				}
			}
		case ']', 'P', '_', '^': // OSC, DCS, APC, PM: up to BEL or ST (ESC \\)
			for i+1 < len(rs) {
				i++
				if rs[i] == 0x07 {
					break
				}
				if rs[i] == 0x1b && i+1 < len(rs) && rs[i+1] == '\\' {
					i++
					break
				}
			}
		}
	}
	return b.String()
}

// cleanText strips control characters from a result's text but keeps its lines and tabs: a
// result is many lines of data, shown in a content block, never in a prompt's structure.
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r', unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, stripEscapes(s))
}

func asTypeError(err error, te **json.UnmarshalTypeError) bool { return errors.As(err, te) }
