// Package jscan is agentd's one JSON scanner, for the two hot paths where encoding/json costs
// more than the work: the providers' streamed chunks and the connection's frames. A streamed chunk
// is a few hundred bytes of which a dialect reads a handful of fields; encoding/json spends
// microseconds and a dozen allocations on one, while this scanner walks it once per level it
// descends into, skips string bodies with bytes.IndexByte and allocates only the strings it
// returns. It checks the structure of every level it walks (and, through ParseObject, that nothing
// follows the top-level value); values it skips are checked for balanced brackets and terminated
// strings only. The strict walk (ValidValueEnd, valid.go) accepts exactly what json.Valid does, for
// the connection, which must refuse a frame that is not one valid JSON object.
//
// Every dialect's fast decoding path (providers/anthropic, providers/gemini, providers/openai),
// jsonrpc's frame reader and the session store's replay of update records use this one package.
package jscan

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Value kinds, by their first byte.
const (
	KindString = '"'
	KindObject = '{'
	KindArray  = '['
	KindNumber = '0'
	KindTrue   = 't'
	KindFalse  = 'f'
	KindNull   = 'n'
)

var ErrSyntax = errors.New("invalid JSON")

func SkipWS(d []byte, i int) int {
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

// shortString is how far StringEnd looks byte by byte before it hands over to IndexByte: most
// strings of a chunk (keys, ids, model names, small deltas) end within it, and for them the plain
// loop is about twice as fast as IndexByte's call and setup.
const shortString = 32

// StringEnd returns the index just past the string that opens at d[i] ('"'), or -1.
func StringEnd(d []byte, i int) int {
	j := i + 1
	for lim := min(len(d), j+shortString); j < lim; j++ {
		switch d[j] {
		case '"':
			return j + 1
		case '\\':
			j++ // the escaped byte
		}
	}
	// j is past every escape seen so far, so only backslashes from j on can escape a quote.
	for start := j; j < len(d); {
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
	return -1
}

// ValueEnd returns the index just past the value that starts at d[i], and its kind; -1 when the
// value is malformed or cut.
func ValueEnd(d []byte, i int) (int, byte) {
	if i >= len(d) {
		return -1, 0
	}
	switch c := d[i]; c {
	case '"':
		return StringEnd(d, i), KindString
	case '{', '[':
		depth := 0
		for j := i; j < len(d); j++ {
			switch d[j] {
			case '"':
				e := StringEnd(d, j)
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
		return literal(d, i, "true"), KindTrue
	case 'f':
		return literal(d, i, "false"), KindFalse
	case 'n':
		return literal(d, i, "null"), KindNull
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
			return j, KindNumber
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

// StopWalk, returned by a callback of Members or Elements, ends the walk early; the walk
// then returns it too.
const StopWalk = -2

// Members walks the object that starts at d[i] (after space). For each member it calls fn with
// the raw key (without quotes, escapes left as they are) and the index where the value starts;
// fn returns the index just past the value (parsing it in place, or skipping it with ValueEnd),
// -1 when it is malformed, or StopWalk. Members returns the index just past the object, -1 when
// the object is malformed, or StopWalk.
func Members(d []byte, i int, fn func(key []byte, vi int) int) int {
	i = SkipWS(d, i)
	if i >= len(d) || d[i] != '{' {
		return -1
	}
	i = SkipWS(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return -1
		}
		ke := StringEnd(d, i)
		if ke < 0 {
			return -1
		}
		key := d[i+1 : ke-1]
		i = SkipWS(d, ke)
		if i >= len(d) || d[i] != ':' {
			return -1
		}
		i = SkipWS(d, i+1)
		if i >= len(d) {
			return -1
		}
		ve := fn(key, i)
		if ve < 0 {
			return ve
		}
		i = SkipWS(d, ve)
		if i >= len(d) {
			return -1
		}
		switch d[i] {
		case ',':
			i = SkipWS(d, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// Elements walks the array that starts at d[i] like Members walks an object.
func Elements(d []byte, i int, fn func(vi int) int) int {
	i = SkipWS(d, i)
	if i >= len(d) || d[i] != '[' {
		return -1
	}
	i = SkipWS(d, i+1)
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
		i = SkipWS(d, ve)
		if i >= len(d) {
			return -1
		}
		switch d[i] {
		case ',':
			i = SkipWS(d, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// EachMember calls fn for every member of the object d with the raw key, the raw value and its
// kind; fn returns false to stop early. It returns the index just past the object.
func EachMember(d []byte, fn func(key, val []byte, kind byte) bool) (int, error) {
	end := Members(d, 0, func(key []byte, vi int) int {
		ve, kind := ValueEnd(d, vi)
		if ve < 0 {
			return -1
		}
		if !fn(key, d[vi:ve], kind) {
			return StopWalk
		}
		return ve
	})
	switch end {
	case -1:
		return -1, ErrSyntax
	case StopWalk:
		return len(d), nil
	}
	return end, nil
}

// EachElement calls fn for every element of the array d with its raw value and kind.
func EachElement(d []byte, fn func(val []byte, kind byte) bool) error {
	end := Elements(d, 0, func(vi int) int {
		ve, kind := ValueEnd(d, vi)
		if ve < 0 {
			return -1
		}
		if !fn(d[vi:ve], kind) {
			return StopWalk
		}
		return ve
	})
	if end == -1 {
		return ErrSyntax
	}
	return nil
}

// ParseObject walks a whole top-level object and refuses anything after it.
func ParseObject(d []byte, fn func(key, val []byte, kind byte) bool) error {
	end, err := EachMember(d, fn)
	if err != nil {
		return err
	}
	if SkipWS(d, end) != len(d) {
		return ErrSyntax
	}
	return nil
}

// ParseInt reads a JSON number that is an integer; ok is false for anything else or overflow.
func ParseInt(raw []byte) (int64, bool) {
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

// Unquote decodes a raw JSON string (with its quotes) into a Go string, appending through buf to
// spare an allocation; only the returned string is allocated.
func Unquote(raw []byte, buf *[]byte) (string, bool) {
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

// Canonical returns the name in names that key (raw, as Members passes it) equals, exactly or
// case-insensitively (the way encoding/json matches struct fields, so a fast path and its
// encoding/json fallback read the same keys), or "".
func Canonical(key []byte, names ...string) string {
	if bytes.IndexByte(key, '\\') >= 0 {
		// An escaped key (rare) is compared unescaped, as encoding/json does.
		quoted := append(append(append(make([]byte, 0, len(key)+2), '"'), key...), '"')
		var buf []byte
		s, ok := Unquote(quoted, &buf)
		if !ok {
			return ""
		}
		key = []byte(s)
	}
	for _, n := range names {
		if string(key) == n {
			return n
		}
	}
	for _, n := range names {
		// A view of n's bytes, not a copy: this runs for every key a fast path does not read.
		if bytes.EqualFold(key, unsafe.Slice(unsafe.StringData(n), len(n))) {
			return n
		}
	}
	return ""
}
