package jscan

import "encoding/binary"

// The strict walk: ValidValueEnd accepts exactly what json.Valid accepts, in one pass and without
// recursion. The connection (jsonrpc) reads every frame with it, since a frame that is not one
// valid JSON object must be answered -32700 rather than half-decoded. The dialects' chunks use the
// lenient walk (ValueEnd), which checks only brackets and string ends of what it skips.

// MaxDepth is encoding/json's nesting limit, so that what ValidValueEnd accepts json.Valid does.
const MaxDepth = 10000

// ValidStringEnd returns the index just past the JSON string that opens at b[i], checking its
// escapes and that it holds no raw control character; -1 when there is no valid string there.
func ValidStringEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		// Eight plain bytes at a time (none a quote, a backslash or a control character): a
		// stored session update is mostly long strings, which the byte loop checked at about
		// 90 MB/s.
		for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain8 reports whether none of the eight bytes of x is '"', '\\' or below 0x20: each test
// is the classic "has a byte less than n" or "has a zero byte" trick over the eight lanes.
// A byte of 0x80 or more (UTF-8) is plain, as it is to the byte loop.
func plain8(x uint64) bool {
	lt20 := (x - ones*0x20) &^ x & highs
	q := x ^ (ones * '"')
	quote := (q - ones) &^ q & highs
	bs := x ^ (ones * '\\')
	back := (bs - ones) &^ bs & highs
	return lt20|quote|back == 0
}

// ValidValueEnd returns the index just past the JSON value that starts at b[i], checking it as
// json.Valid does; -1 when there is no valid value there. Nested objects and arrays are walked
// with a stack of their openers.
func ValidValueEnd(b []byte, i int) int {
	var buf [32]byte
	stack := buf[:0]
	for {
		// A value starts at i.
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			i = ValidStringEnd(b, i)
		case c == '{' || c == '[':
			close := byte('}')
			if c == '[' {
				close = ']'
			}
			if len(stack) == MaxDepth { // before the empty case: [] is a level too
				return -1
			}
			i = SkipWS(b, i+1)
			if i < len(b) && b[i] == close {
				i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if i = validKey(b, i); i < 0 {
					return -1
				}
			}
			continue
		case c == 't':
			i = literal(b, i, "true")
		case c == 'f':
			i = literal(b, i, "false")
		case c == 'n':
			i = literal(b, i, "null")
		default:
			i = validNumber(b, i)
		}
		if i < 0 {
			return -1
		}
		// A value ended at i: close what it ends, or move to the next member or element.
		for {
			if len(stack) == 0 {
				return i
			}
			i = SkipWS(b, i)
			if i >= len(b) {
				return -1
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i = SkipWS(b, i+1)
				if top == '{' {
					if i = validKey(b, i); i < 0 {
						return -1
					}
				}
				break
			}
			if top == '{' && b[i] == '}' || top == '[' && b[i] == ']' {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return -1
		}
	}
}

// validKey walks an object member's key and colon, returning where its value starts, or -1.
func validKey(b []byte, i int) int {
	if i = ValidStringEnd(b, i); i < 0 {
		return -1
	}
	i = SkipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return SkipWS(b, i+1)
}

// validNumber walks -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, returning its end or -1.
func validNumber(b []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if i = digits(i); i < 0 {
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(i + 1); i < 0 {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i = digits(i); i < 0 {
			return -1
		}
	}
	return i
}
