package openai

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// A minimal JSON scanner for the decoder's hot path. A chat-completions chunk is a few hundred
// bytes of which agentd reads a handful of fields; encoding/json spends about 2.7 µs and 13
// allocations on one, this scanner walks it once per level it descends into, skips string bodies
// with bytes.IndexByte and allocates only the strings it returns. It checks the structure of every
// level it walks (and that nothing follows the top-level value); values it skips are checked for
// balanced brackets and terminated strings only.

// Value kinds, by their first byte.
const (
	kindString = '"'
	kindObject = '{'
	kindArray  = '['
	kindNumber = '0'
	kindTrue   = 't'
	kindFalse  = 'f'
	kindNull   = 'n'
)

var errSyntax = errors.New("invalid JSON")

func skipWS(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the string that opens at d[i] ('"'), or -1.
func stringEnd(d []byte, i int) int {
	start := i + 1
	for j := start; ; {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			return -1
		}
		k += j
		n := 0
		for b := k - 1; b >= start && d[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return k + 1
		}
		j = k + 1
	}
}

// valueEnd returns the index just past the value that starts at d[i], and its kind; -1 when the
// value is malformed or cut.
func valueEnd(d []byte, i int) (int, byte) {
	if i >= len(d) {
		return -1, 0
	}
	switch c := d[i]; c {
	case '"':
		return stringEnd(d, i), kindString
	case '{', '[':
		depth := 0
		for j := i; j < len(d); j++ {
			switch d[j] {
			case '"':
				e := stringEnd(d, j)
				if e < 0 {
					return -1, 0
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, c
				}
			}
		}
		return -1, 0
	case 't':
		return literal(d, i, "true"), kindTrue
	case 'f':
		return literal(d, i, "false"), kindFalse
	case 'n':
		return literal(d, i, "null"), kindNull
	default:
		if c == '-' || c >= '0' && c <= '9' {
			j := i + 1
			for j < len(d) {
				b := d[j]
				if b >= '0' && b <= '9' || b == '.' || b == 'e' || b == 'E' || b == '+' || b == '-' {
					j++
					continue
				}
				break
			}
			return j, kindNumber
		}
	}
	return -1, 0
}

func literal(d []byte, i int, lit string) int {
	if len(d)-i >= len(lit) && string(d[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

// stopWalk, returned by a callback of membersAt or elementsAt, ends the walk early; the walk
// then returns it too.
const stopWalk = -2

// membersAt walks the object that starts at d[i] (after space). For each member it calls fn with
// the raw key (without quotes, escapes left as they are) and the index where the value starts;
// fn returns the index just past the value (parsing it in place, or skipping it with valueEnd),
// -1 when it is malformed, or stopWalk. membersAt returns the index just past the object, -1 when
// the object is malformed, or stopWalk.
func membersAt(d []byte, i int, fn func(key []byte, vi int) int) int {
	i = skipWS(d, i)
	if i >= len(d) || d[i] != '{' {
		return -1
	}
	i = skipWS(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return -1
		}
		ke := stringEnd(d, i)
		if ke < 0 {
			return -1
		}
		key := d[i+1 : ke-1]
		i = skipWS(d, ke)
		if i >= len(d) || d[i] != ':' {
			return -1
		}
		i = skipWS(d, i+1)
		if i >= len(d) {
			return -1
		}
		ve := fn(key, i)
		if ve < 0 {
			return ve
		}
		i = skipWS(d, ve)
		if i >= len(d) {
			return -1
		}
		switch d[i] {
		case ',':
			i = skipWS(d, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// elementsAt walks the array that starts at d[i] like membersAt walks an object.
func elementsAt(d []byte, i int, fn func(vi int) int) int {
	i = skipWS(d, i)
	if i >= len(d) || d[i] != '[' {
		return -1
	}
	i = skipWS(d, i+1)
	if i < len(d) && d[i] == ']' {
		return i + 1
	}
	for {
		if i >= len(d) {
			return -1
		}
		ve := fn(i)
		if ve < 0 {
			return ve
		}
		i = skipWS(d, ve)
		if i >= len(d) {
			return -1
		}
		switch d[i] {
		case ',':
			i = skipWS(d, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// eachMember calls fn for every member of the object d with the raw key, the raw value and its
// kind; fn returns false to stop early. It returns the index just past the object.
func eachMember(d []byte, fn func(key, val []byte, kind byte) bool) (int, error) {
	end := membersAt(d, 0, func(key []byte, vi int) int {
		ve, kind := valueEnd(d, vi)
		if ve < 0 {
			return -1
		}
		if !fn(key, d[vi:ve], kind) {
			return stopWalk
		}
		return ve
	})
	switch end {
	case -1:
		return -1, errSyntax
	case stopWalk:
		return len(d), nil
	}
	return end, nil
}

// eachElement calls fn for every element of the array d with its raw value and kind.
func eachElement(d []byte, fn func(val []byte, kind byte) bool) error {
	end := elementsAt(d, 0, func(vi int) int {
		ve, kind := valueEnd(d, vi)
		if ve < 0 {
			return -1
		}
		if !fn(d[vi:ve], kind) {
			return stopWalk
		}
		return ve
	})
	if end == -1 {
		return errSyntax
	}
	return nil
}

// parseObject walks a whole top-level object and refuses anything after it.
func parseObject(d []byte, fn func(key, val []byte, kind byte) bool) error {
	end, err := eachMember(d, fn)
	if err != nil {
		return err
	}
	if skipWS(d, end) != len(d) {
		return errSyntax
	}
	return nil
}

// parseInt reads a JSON number that is an integer; ok is false for anything else or overflow.
func parseInt(raw []byte) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// unquote decodes a raw JSON string (with its quotes) into a Go string, appending through buf to
// spare an allocation; only the returned string is allocated.
func unquote(raw []byte, buf *[]byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), true
	}
	out := (*buf)[:0]
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			j := bytes.IndexByte(body[i:], '\\')
			if j < 0 {
				j = len(body) - i
			}
			out = append(out, body[i:i+j]...)
			i += j
			continue
		}
		if i+1 >= len(body) {
			return "", false
		}
		switch e := body[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
			i += 2
		case 'b':
			out, i = append(out, '\b'), i+2
		case 'f':
			out, i = append(out, '\f'), i+2
		case 'n':
			out, i = append(out, '\n'), i+2
		case 'r':
			out, i = append(out, '\r'), i+2
		case 't':
			out, i = append(out, '\t'), i+2
		case 'u':
			r, ok := hex4(body, i+2)
			if !ok {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(-1), false
				if i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
					r2, ok2 = hex4(body, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	*buf = out
	return string(out), true
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
